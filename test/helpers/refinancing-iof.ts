/**
 * Contract §17's IOF of a refinancing computed apart from the service's module (for the API
 * test): the unit Price schedule on calendar days, the two parts of τ written out, and §7's
 * financed principal. decimal.js at 40 digits, half-even.
 */
import { Decimal as DecimalJs } from 'decimal.js';

const D = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_EVEN });
const days = (a: string, b: string) =>
  Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);

export function expectedRefinancingPrincipal(input: {
  requestedAmount: number;
  monthlyRate: string;
  releaseDate: string;
  dueDates: string[];
  refinanced: {
    amount: number;
    releasedOn: string;
    unpaidRows: { principal: number; dueDate: string }[];
  };
  flat?: string;
  daily?: string;
}): { principal: number; allNewMoney: number } {
  const flat = new D(input.flat ?? '0.0038');
  const daily = new D(input.daily ?? '0.000082');
  const growth = new D(1).plus(input.monthlyRate);
  const d = input.dueDates.map((due) => days(input.releaseDate, due));
  // Row j's share of one unit of principal: Price on calendar days.
  const installment = new D(1).div(d.reduce((sum, dj) => sum.plus(growth.pow(-dj / 30)), new D(0)));
  let balance = new D(1);
  const shares = d.map((dj, j) => {
    const interest = balance.times(growth.pow((dj - (j === 0 ? 0 : d[j - 1]!)) / 30).minus(1));
    const share = j === d.length - 1 ? balance : installment.minus(interest);
    balance = balance.minus(share);
    return share;
  });
  const full = shares.reduce(
    (sum, share, j) => sum.plus(share.times(daily).times(Math.min(d[j]!, 365))),
    flat,
  );
  // The old loan: e days since its release; its IOF covered its unpaid principal to T.
  const { refinanced } = input;
  const e = days(refinanced.releasedOn, input.releaseDate);
  const unpaid = refinanced.unpaidRows.reduce((sum, row) => sum + row.principal, 0);
  const covered = refinanced.unpaidRows
    .reduce(
      (sum, row) =>
        sum.plus(
          new D(row.principal).times(Math.min(days(refinanced.releasedOn, row.dueDate), 365)),
        ),
      new D(0),
    )
    .div(unpaid);
  const from = DecimalJs.max(e, covered, Math.min(e, 365));
  const complement = shares.reduce(
    (sum, share, j) =>
      sum.plus(share.times(DecimalJs.max(0, new D(Math.min(e + d[j]!, 365)).minus(from)))),
    new D(0),
  );
  const requested = new D(input.requestedAmount);
  const tau = requested
    .minus(refinanced.amount)
    .div(requested)
    .times(full)
    .plus(new D(refinanced.amount).div(requested).times(daily).times(complement));
  const financed = (rate: DecimalJs) =>
    requested.div(new D(1).minus(rate)).toDecimalPlaces(0, DecimalJs.ROUND_HALF_EVEN).toNumber();
  return { principal: financed(tau), allNewMoney: financed(full) };
}
