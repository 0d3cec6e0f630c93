import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { SimulationFigures, SimulationInput } from './simulation.js';
import simulateHere, { type RefinancedBalanceData } from './simulation-worker.js';

/**
 * Simulations up to this many installments run on the event loop: their math takes under a
 * millisecond (0.3 ms for 12), less than handing them to a thread and back. Longer ones — 360
 * installments take about 8 ms — go to the pool, so the requests beside them are not kept waiting.
 */
export const INLINE_MAX_INSTALLMENTS = 48;

export interface SimulationPool {
  /** §7's simulation; with `refinanced`, a refinancing's (§17: its IOF priced apart). */
  simulate(
    input: SimulationInput & { refinanced?: RefinancedBalanceData[] },
  ): Promise<SimulationFigures>;
  /** How many simulations the threads have run. */
  offloaded(): number;
  close(): Promise<void>;
}

/** SIMULATION_THREADS' default: every core but the one the event loop runs on, at least one. */
export const defaultSimulationThreads = (): number => Math.max(1, availableParallelism() - 1);

/**
 * Long simulations on `threads` worker threads (piscina), short ones inline; `threads: 0` runs
 * every one inline. Under tsx (development, tests) the threads load the TypeScript worker with
 * tsx; the production build runs the compiled one.
 */
export function createSimulationPool(options: { threads: number }): SimulationPool {
  if (options.threads === 0)
    return {
      simulate: (input) => Promise.resolve(simulateHere(input)),
      offloaded: () => 0,
      close: async () => {},
    };
  const source = import.meta.url.endsWith('.ts');
  const pool = new Piscina<
    SimulationInput & { refinanced?: RefinancedBalanceData[] },
    SimulationFigures
  >({
    filename: new URL(`./simulation-worker.${source ? 'ts' : 'js'}`, import.meta.url).href,
    minThreads: options.threads,
    maxThreads: options.threads,
    // A thread is a few megabytes: kept, not respawned per burst.
    idleTimeout: Number.POSITIVE_INFINITY,
    // Below the event loop's priority: when the cores are busy, requests come before the math.
    niceIncrement: 10,
    ...(source ? { execArgv: ['--import', 'tsx'] } : {}),
  });
  return {
    simulate: (input) =>
      input.installments <= INLINE_MAX_INSTALLMENTS
        ? Promise.resolve(simulateHere(input))
        : pool.run(input),
    offloaded: () => pool.completed,
    close: () => pool.destroy(),
  };
}
