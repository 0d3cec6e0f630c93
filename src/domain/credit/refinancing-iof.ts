/**
 * IOF of a refinancing (contract §17; Decreto 6.306/2007 art. 7 §7, Solução de Consulta Cosit
 * 313/2018). A new loan whose requested amount R pays off old loans (B_k each) and releases the
 * rest N = R − ΣB_k to the borrower is taxed as two parts of one principal:
 *
 * - the new money pays in full: the flat 0.38 % and the daily rate on each row for min(d_j, 365)
 *   days, as any loan (§7);
 * - each refinanced balance is the same credit continued ("tributação complementar"): no flat rate
 *   again, and the daily rate only for the days its original operation had not paid, up to 365
 *   days counted from the original operation. With e_k the days from the old loan's release to the
 *   new release and T_k the days the old loan's IOF already covered (its unpaid rows' min(D, 365)
 *   weighted by their principal; at least e_k, the days it ran), row j of the new loan pays for
 *   max(0, min(e_k + d_j, 365) − max(e_k, T_k)) days.
 *
 * Each row's share s_j of the principal is the same for both parts (the schedule is one), so τ,
 * the IOF as a fraction of the principal, still does not depend on the principal:
 *
 *   τ = (N/R)·(flat + daily·Σ s_j·min(d_j, 365)) + Σ_k (B_k/R)·daily·Σ s_j·days_kj
 *
 * and the financed principal is R ÷ (1 − τ), half-even to the centavo, as §7 finances IOF.
 * Pure and deterministic: decimal.js only.
 */
import { Decimal, fromCentavos, toCentavos } from '../money.js';
import { IOF_MAX_DAYS, iofRate } from './simulation.js';

/** An old loan the new one pays off, as its IOF saw it. */
export interface RefinancedBalance {
  /** Centavos of the new loan's requested amount that pay this loan off (its payoff at release). */
  amount: number;
  /** Calendar days from the old loan's release to the new loan's release (e_k). */
  elapsedDays: number;
  /** Days from the old loan's release its IOF already covered (T_k; see `iofPaidThroughDays`). */
  paidThroughDays: Decimal | number;
}

/**
 * T_k: up to which day (from its release) an old loan's IOF covered the principal still unpaid —
 * its unpaid rows' min(D, 365), weighted by their principal parts, never below the days it ran.
 */
export function iofPaidThroughDays(
  unpaidRows: readonly { principal: number; daysFromRelease: number }[],
  elapsedDays: number,
): Decimal {
  const principal = unpaidRows.reduce((sum, row) => sum + row.principal, 0);
  if (principal === 0) return new Decimal(Math.min(elapsedDays, IOF_MAX_DAYS));
  const weighted = unpaidRows.reduce(
    (sum, row) =>
      sum.plus(new Decimal(row.principal).times(Math.min(row.daysFromRelease, IOF_MAX_DAYS))),
    new Decimal(0),
  );
  return Decimal.max(weighted.div(principal), Math.min(elapsedDays, IOF_MAX_DAYS));
}

/** The days row j of the new loan (due d_j days after its release) is taxed for a balance. */
export const complementDays = (balance: RefinancedBalance, d: number): Decimal =>
  Decimal.max(
    0,
    Decimal.min(balance.elapsedDays + d, IOF_MAX_DAYS).minus(
      Decimal.max(balance.elapsedDays, balance.paidThroughDays),
    ),
  );

/** τ of a refinancing: the IOF as a fraction of the financed principal. */
export function refinancingIofRate(input: {
  requestedAmount: number;
  refinanced: readonly RefinancedBalance[];
  /** Each row's share of the principal (`unitSchedule`'s), and its days from the release. */
  shares: readonly Decimal[];
  days: readonly number[];
  flat: string;
  daily: string;
}): Decimal {
  const requested = new Decimal(input.requestedAmount);
  const refinancedTotal = input.refinanced.reduce((sum, b) => sum + b.amount, 0);
  if (refinancedTotal > input.requestedAmount || input.refinanced.some((b) => b.amount <= 0))
    throw new RangeError(
      'the refinanced balances must be positive and within the requested amount',
    );
  const newMoney = new Decimal(input.requestedAmount - refinancedTotal);
  const full = iofRate([...input.shares], [...input.days], input.flat, input.daily);
  let tau = newMoney.div(requested).times(full);
  for (const balance of input.refinanced) {
    const weightedDays = input.shares.reduce(
      (sum, share, j) => sum.plus(share.times(complementDays(balance, input.days[j]!))),
      new Decimal(0),
    );
    tau = tau.plus(
      new Decimal(balance.amount).div(requested).times(input.daily).times(weightedDays),
    );
  }
  return tau;
}

/** The principal and IOF (centavos) of a refinancing that leaves `requestedAmount` to pay out. */
export function refinancingPrincipal(input: Parameters<typeof refinancingIofRate>[0]): {
  principal_amount: number;
  iof_amount: number;
} {
  const principal = toCentavos(
    fromCentavos(input.requestedAmount).div(new Decimal(1).minus(refinancingIofRate(input))),
  );
  return { principal_amount: principal, iof_amount: principal - input.requestedAmount };
}
