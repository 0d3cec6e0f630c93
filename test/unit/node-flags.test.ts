import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heapFlags } from '../../src/main/node-flags.js';
import { projectRoot } from '../../src/project-root.js';

const read = (file: string) => readFileSync(join(projectRoot, file), 'utf8');
const entries = { api: 'dist/src/main/api.js', worker: 'dist/src/main/worker.js' } as const;

/** Every way the production processes are started, as the argument lists it runs. */
function launchLines(): Record<string, string[]> {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const dockerCmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
  // docker-compose.yml writes each command as a flow sequence; the api's and the worker's are
  // the two that end in their entry point (the one-shot migrate step needs no heap flags).
  const longRunning: readonly string[] = Object.values(entries);
  const composeCommands = [...read('docker-compose.yml').matchAll(/command:\s*(\[[^\]]*\])/g)]
    .map((match) => JSON.parse(match[1]!.replaceAll("'", '"')) as string[])
    .filter((command) => longRunning.includes(command.at(-1) ?? ''));
  return {
    'npm run start:api': scripts['start:api']!.split(' '),
    'npm run start:worker': scripts['start:worker']!.split(' '),
    'Dockerfile CMD': JSON.parse(dockerCmd ?? '[]') as string[],
    ...Object.fromEntries(
      composeCommands.map((command) => [`docker-compose ${command.at(-1)}`, command]),
    ),
  };
}

describe('the heap flags of the API and the worker', () => {
  it('are on every command that starts them in production', () => {
    const lines = launchLines();
    expect(Object.keys(lines)).toEqual([
      'npm run start:api',
      'npm run start:worker',
      'Dockerfile CMD',
      `docker-compose ${entries.api}`,
      `docker-compose ${entries.worker}`,
    ]);
    for (const [where, argv] of Object.entries(lines)) {
      const entry = argv.at(-1)!;
      expect(Object.values(entries), where).toContain(entry);
      expect(argv, where).toEqual(['node', ...heapFlags, entry]);
    }
  });

  it('are flags this node accepts, and shrink the young generation', () => {
    // The heap limit counts the young generation's reservation (three semi-spaces' worth): 8 MB
    // semi-spaces instead of the default 16 take about 24 MB off it. A flag node does not know
    // stops it at once ("bad option"), so a misspelt one fails here too.
    const heapLimit = (flags: readonly string[]) => {
      const run = spawnSync(
        process.execPath,
        [...flags, '-p', "require('v8').getHeapStatistics().heap_size_limit"],
        { encoding: 'utf8' },
      );
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      return Number(run.stdout.trim());
    };
    const saved = heapLimit([]) - heapLimit(heapFlags);
    expect(saved).toBeGreaterThanOrEqual(20 * 1024 * 1024);
    expect(saved).toBeLessThanOrEqual(32 * 1024 * 1024);
  });
});
