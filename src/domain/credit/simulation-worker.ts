/**
 * The body of the simulation pool's threads (`simulation-pool.ts`): the money math of one
 * simulation, off the API's event loop.
 */
import { simulateLoan, type SimulationFigures, type SimulationInput } from './simulation.js';

export default function simulate(input: SimulationInput): SimulationFigures {
  return simulateLoan(input);
}
