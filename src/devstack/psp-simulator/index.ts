import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { projectRoot } from '../../project-root.js';
import { superviseServer } from '../server-process.js';
import type { PspSimulatorOptions } from './server.js';

/** What the simulator's process is started with: the server's options, its PEM files by path. */
export type SimulatorProcessOptions = Omit<PspSimulatorOptions, 'tls'> & {
  tlsFiles: { cert: string; key: string; ca: string };
};

export interface PspSimulator {
  /** The PSP_API_URL to give the service. */
  url: string;
  process: ChildProcess;
  /** Calls a control route (`/_simulator/…`): JSON in, status and JSON out. */
  control(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

/**
 * Starts the PSP simulator in a process of its own (like Mailpit and MinIO), on loopback, its state
 * in `options.stateFile` (kept across restarts). Resolves once it listens.
 */
export async function startPspSimulator(options: SimulatorProcessOptions): Promise<PspSimulator> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(projectRoot, 'src/main/psp-simulator.ts')],
    {
      cwd: projectRoot,
      env: { ...process.env, PSP_SIMULATOR_OPTIONS: JSON.stringify(options) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { exited, stop } = superviseServer(child, 'The PSP simulator');
  let url: string;
  try {
    url = await Promise.race([
      new Promise<string>((resolve) => {
        let output = '';
        const listen = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /psp-simulator listening on (\S+)/.exec(output);
          if (match?.[1]) {
            child.stdout?.off('data', listen);
            resolve(match[1]);
          }
        };
        child.stdout?.on('data', listen);
      }),
      exited,
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  const ca = readFileSync(options.tlsFiles.ca, 'utf8');
  return {
    url,
    process: child,
    stop,
    control: simulatorControl(url, ca),
  };
}

/**
 * The control routes of a simulator another process started (the test run's, say), at `base`,
 * its certificate checked against `ca` (PEM).
 */
export const simulatorControl =
  (base: string, ca: string): PspSimulator['control'] =>
  (method, path, body) =>
    controlCall(base, ca, method, path, body);

function controlCall(
  base: string,
  ca: string,
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const call = request(
      new URL(`/_simulator${path}`, base),
      { method, ca, headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString() || 'null') as unknown,
          }),
        );
        response.on('error', reject);
      },
    );
    call.on('error', reject);
    call.end(payload);
  });
}
