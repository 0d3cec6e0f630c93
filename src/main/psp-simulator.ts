/**
 * The PSP simulator's process (src/devstack/psp-simulator/): `startPspSimulator` spawns it with its
 * options in PSP_SIMULATOR_OPTIONS (JSON: see `SimulatorProcessOptions`, PEM files by path). Prints
 * `psp-simulator listening on <url>` once it answers; SIGTERM stops it.
 */
import { readFileSync } from 'node:fs';
import type { SimulatorProcessOptions } from '../devstack/psp-simulator/index.js';
import { runPspSimulator } from '../devstack/psp-simulator/server.js';

const raw = process.env.PSP_SIMULATOR_OPTIONS;
if (!raw)
  throw new Error('PSP_SIMULATOR_OPTIONS: the simulator’s options as JSON (see startPspSimulator)');
const options = JSON.parse(raw) as SimulatorProcessOptions;
const simulator = await runPspSimulator({
  ...options,
  tls: {
    cert: readFileSync(options.tlsFiles.cert, 'utf8'),
    key: readFileSync(options.tlsFiles.key, 'utf8'),
    ca: readFileSync(options.tlsFiles.ca, 'utf8'),
  },
});
process.stdout.write(`psp-simulator listening on ${simulator.url}\n`);
const stop = () => void simulator.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
