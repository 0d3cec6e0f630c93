import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { userInfo } from 'node:os';

/** The Chromium the browser tests drive: CHROMIUM_PATH, else Debian's package. */
export const chromiumPath = () => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const exists = async (path: string) =>
  access(path, constants.X_OK).then(
    () => true,
    () => false,
  );

/**
 * Makes sure a Chromium is there for the browser tests: as root on Debian, installs the `chromium`
 * package (a download of a browser by a test tool cannot work here; the distribution's can).
 */
export async function ensureChromium(progress: (line: string) => void): Promise<string> {
  const path = chromiumPath();
  if (await exists(path)) return path;
  if (process.env.CHROMIUM_PATH) throw new Error(`CHROMIUM_PATH=${path} is not an executable file`);
  if (userInfo().uid !== 0 || !(await exists('/usr/bin/apt-get'))) {
    throw new Error(
      "No Chromium for the browser tests. Install your distribution's chromium package, or set CHROMIUM_PATH to a Chromium or Chrome binary.",
    );
  }
  progress("installing Debian's chromium package for the browser tests (first run only)…");
  await run('apt-get', ['update', '-qq'], progress);
  await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], progress);
  if (!(await exists(path)))
    throw new Error(`apt-get installed chromium, but ${path} is not there`);
  return path;
}

function run(command: string, args: string[], progress: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const forward = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n'))
        if (line.trim()) progress(`  ${command}: ${line.trim()}`);
    };
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    );
  });
}
