import type { BackupTools } from '../backup/backup.js';
import { backupTargets, type BackupTargets } from '../backup/targets.js';
import { resolveMinioClient } from '../devstack/minio.js';
import { resolvePostgresClientTools } from '../devstack/postgres-client-tools.js';

/** What `npm run backup` and `npm run restore` share: the folder argument, the targets, the tools. */
export async function prepare(
  command: 'backup' | 'restore',
): Promise<{ folder: string; targets: BackupTargets; tools: BackupTools }> {
  const folder = process.argv[2];
  if (!folder || folder.startsWith('-')) {
    console.error(`usage: npm run ${command} -- <folder>`);
    process.exit(2);
  }
  const resolved = backupTargets(process.env);
  if (resolved.problems) {
    console.error(
      `Cannot ${command}:\n${resolved.problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    process.exit(78);
  }
  const progress = progressOf(command);
  const [postgres, mc] = await Promise.all([
    resolvePostgresClientTools(progress),
    resolveMinioClient(progress),
  ]);
  if (mc.executable.type !== 'existing-path') throw new Error('mc not resolved');
  return {
    folder,
    targets: resolved.targets,
    tools: { postgres, mc: { path: mc.executable.path, source: mc.source } },
  };
}

export const progressOf =
  (command: string) =>
  (line: string): void =>
    void process.stderr.write(`[${command}] ${line}\n`);
