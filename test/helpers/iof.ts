import { Decimal as DecimalJs } from 'decimal.js';
import { daysBetween } from '../../src/domain/business-date.js';
import type { IofRates } from '../../src/domain/credit/simulation.js';

/**
 * The IOF rates of contract §2 (Decreto 6.306/2007 as amended): 0.38 % flat, 0.0082 % a day for
 * individuals and companies, 0.00274 % for an MEI up to R$ 30,000.00 of principal. Spelled out
 * here so the money tests do not take the service's configured defaults as their oracle.
 */
export const decreeIof: IofRates = {
  flat: '0.0038',
  dailyIndividual: '0.000082',
  dailyCompany: '0.000082',
  dailyMei: '0.0000274',
  meiPrincipalLimitAmount: 3_000_000,
};

/** The test's own decimals: 40 digits, half-even, independent of the service's. */
const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });

/**
 * The principal a loan released on `released` finances, by hand (Decreto 6.306/2007 art. 7, I,
 * b): P' = requested + flat·P' + daily·Σ a_j·min(d_j, 365), the days counted from the release
 * (none for a due date it reached late), where row 1's amortization is P' − B₁ (it ends on its
 * priced balance) and the others are as priced. Solved in closed form, independently of the
 * service's iteration; half-even to the centavo.
 */
export function repricedPrincipalByHand(
  priced: {
    requested_amount: number;
    schedule: readonly { due_date: string; principal_amount: number; balance_amount: number }[];
  },
  released: string,
  flat: string,
  daily: string,
): number {
  const days = priced.schedule.map((row) =>
    Math.min(Math.max(0, daysBetween(released, row.due_date)), 365),
  );
  const later = priced.schedule
    .slice(1)
    .reduce(
      (sum, row, j) => sum.plus(new Decimal(row.principal_amount).times(days[j + 1]!)),
      new Decimal(0),
    );
  const b1 = new Decimal(priced.schedule[0]!.balance_amount);
  const numerator = new Decimal(priced.requested_amount).plus(
    new Decimal(daily).times(later.minus(b1.times(days[0]!))),
  );
  const denominator = new Decimal(1).minus(flat).minus(new Decimal(daily).times(days[0]!));
  return numerator.div(denominator).toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();
}
