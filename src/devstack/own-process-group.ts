import { spawn } from 'node:child_process';

/**
 * A supervisor that must stop its servers in order cannot share the terminal's process group:
 * Ctrl-C signals the whole foreground group, so every server it started (some spawned by libraries,
 * out of its reach) would stop at once, before what depends on them. The process the terminal
 * started re-runs the entry point as the supervisor, in a group of its own, and only relays the
 * signals it receives to it (the supervisor's pid, never its group): the supervisor decides the
 * order. The relay exits with the supervisor's code; if the relay dies, the supervisor's IPC channel
 * closes (its 'disconnect' event) and it should stop too.
 */
export const SUPERVISOR_MARKER = 'EMBEDDED_CREDIT_SUPERVISOR';

/** Whether this process is the supervisor (else it should call `relayToSupervisor`). */
export const isSupervisor = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env[SUPERVISOR_MARKER] === '1';

/** Starts `entry` (TypeScript, through tsx) as the supervisor in its own process group. */
export function relayToSupervisor(entry: string, cwd: string): void {
  const supervisor = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd,
    env: { ...process.env, [SUPERVISOR_MARKER]: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  const relay = (signal: NodeJS.Signals) => () => supervisor.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, relay(signal));
  supervisor.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
