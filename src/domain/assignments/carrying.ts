/**
 * What the book carries of a loan on the day it is sold (contract §19): its principal (the
 * ledger's `loan_principal`), and the interest and late charges accrued to that day — the payoff
 * of the day (§13) less the principal and the charges. Settlement earns them (credits the
 * incomes) and takes them off the book with the principal. Pure.
 */
import {
  isPaid,
  lateCharges,
  quotePayoff,
  type Repayment,
  type RepaymentTerms,
} from '../loans/allocation.js';

export interface Carrying {
  principal: number;
  interest: number;
  late_fee: number;
  late_interest: number;
}

export function carriedOn(
  repayment: Repayment,
  terms: RepaymentTerms,
  principal: number,
  date: string,
): Carrying {
  let lateFee = 0;
  let lateInterest = 0;
  for (const row of repayment.rows.filter((row) => !isPaid(row))) {
    const charges = lateCharges(row, date, terms.lateCharges);
    lateFee += charges.lateFee;
    lateInterest += charges.lateInterest;
  }
  const payoff = quotePayoff(repayment, date, terms).payoffAmount;
  return {
    principal,
    interest: Math.max(0, payoff - principal - lateFee - lateInterest),
    late_fee: lateFee,
    late_interest: lateInterest,
  };
}
