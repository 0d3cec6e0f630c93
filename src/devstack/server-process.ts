import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/**
 * What the project's servers (MinIO, Mailpit) share once spawned: their last output kept for the
 * error if they exit before answering, and a stop that escalates to SIGKILL after 5 s.
 */
export function superviseServer(
  child: ChildProcess,
  what: string,
): { exited: Promise<never>; stop: () => Promise<void> } {
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`${what} exited with ${code} before answering:\n${output.trim()}`)),
    ),
  );
  exited.catch(() => {});
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  };
  return { exited, stop };
}

/** Polls `ready` every 100 ms until it says yes (a throw counts as not yet), for at most 30 s. */
export async function waitUntilReady(
  what: string,
  where: string,
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if (await ready()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer on ${where} within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether something on loopback takes a TCP connection on `port` right now. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
