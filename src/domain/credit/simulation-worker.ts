/**
 * The body of the simulation pool's threads (`simulation-pool.ts`): the money math of one
 * simulation, off the API's event loop. A refinancing's balances come as data (structured clone
 * keeps no Decimal): T as a decimal string.
 */
import { Decimal } from '../money.js';
import { simulateRefinancing, type RefinancedBalance } from './refinancing-iof.js';
import type { SimulationFigures, SimulationInput } from './simulation.js';

/** A refinanced balance as it crosses to a thread: `paidThroughDays` a decimal string. */
export type RefinancedBalanceData = Omit<RefinancedBalance, 'paidThroughDays'> & {
  paidThroughDays: string;
};

export default function simulate(
  input: SimulationInput & { refinanced?: RefinancedBalanceData[] },
): SimulationFigures {
  const { refinanced = [], ...loan } = input;
  return simulateRefinancing(
    loan,
    refinanced.map((balance) => ({
      ...balance,
      paidThroughDays: new Decimal(balance.paidThroughDays),
    })),
  );
}
