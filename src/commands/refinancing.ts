/**
 * Refinancing (contract §17) at `POST /v3/loans {refinances}` and its simulation: reads the loans
 * a new loan would pay off, runs the checks of src/domain/loans/refinancing.ts on them and prices
 * their payoffs on the release date. In a transaction the loans are read under their row locks,
 * so a payment or another refinancing cannot interleave with the loan's insertion.
 */
import { findLoan, lockAndReadLoan, repaymentOf, repaymentTerms } from '../db/queries/loans.js';
import type { LoanView } from '../db/queries/loans.js';
import type { DbOrTx } from '../db/client.js';
import { liveAgreementsOf, liveRefinancersOf } from '../db/queries/refinancings.js';
import { daysBetween } from '../domain/business-date.js';
import { iofPaidThroughDays, type RefinancedBalance } from '../domain/credit/refinancing-iof.js';
import { isPaid, payoffAmount } from '../domain/loans/allocation.js';
import {
  refinancedLoanRefusal,
  refinancesProblems,
  refinancingCoverage,
  type RefinancedPayoff,
} from '../domain/loans/refinancing.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems } from '../errors.js';

/** The old loans' payoffs on the release date, and the balances the IOF rule prices. */
export interface RefinancingTerms {
  payoffs: RefinancedPayoff[];
  balances: RefinancedBalance[];
  /** Centavos of the requested amount released to the borrower. */
  newMoney: number;
}

/** An old loan's payoff on `date` and what its IOF covered (T), from its record. */
export function refinancedPayoffOf(loan: LoanView, date: string): RefinancedPayoff {
  const repayment = repaymentOf(loan);
  const releasedOn = loan.figures.release_date;
  const principalOf = new Map(
    loan.figures.schedule.map((row) => [row.number, row.principal_amount]),
  );
  return {
    loanId: loan.id,
    payoffAmount: payoffAmount(repayment, date, repaymentTerms(loan)),
    releasedOn,
    paidThroughDays: iofPaidThroughDays(
      repayment.rows
        .filter((row) => !isPaid(row))
        .map((row) => ({
          principal: principalOf.get(row.number) ?? 0,
          daysFromRelease: daysBetween(releasedOn, row.due_date),
        })),
      Math.max(0, daysBetween(releasedOn, date)),
    ),
  };
}

/**
 * `refinances` checked for a loan of `customerId` whose requested amount is `requestedAmount`,
 * released on `releaseDate`: the list (422), each loan (404 `loan_not_found`, 409
 * `refinanced_loan_not_active`, `refinanced_loan_written_off`, `loan_already_being_refinanced`,
 * `refinanced_loan_in_agreement`), then the coverage (422 `refinancing_not_covered`). With
 * `lock`, each loan is read under its row lock (in the caller's transaction), in id order.
 */
export async function refinancingTerms(
  db: DbOrTx,
  tenant: Tenant,
  request: {
    customerId: string;
    ids: readonly string[];
    requestedAmount: number;
    releaseDate: string;
    lock?: boolean;
  },
): Promise<RefinancingTerms> {
  const listProblems = refinancesProblems(request.ids);
  if (listProblems.length > 0)
    throw problems.validation(
      listProblems.map((problem) => ({
        path: 'index' in problem ? `body.refinances.${problem.index}` : 'body.refinances',
        code: problem.code,
        message: problem.message,
      })),
    );
  const loans = new Map<string, LoanView | undefined>();
  for (const id of [...request.ids].sort())
    loans.set(id, await (request.lock ? lockAndReadLoan : findLoan)(db, tenant, id));
  const refinancers = await liveRefinancersOf(db, tenant, request.ids);
  const agreements = await liveAgreementsOf(db, tenant, request.ids);
  const payoffs: RefinancedPayoff[] = [];
  for (const id of request.ids) {
    const loan = loans.get(id);
    const refusal = refinancedLoanRefusal(
      loan && {
        id,
        customerId: loan.customerId,
        status: loan.status,
        writtenOffAt: loan.writtenOffAt,
        refinancedBy: refinancers.get(id) ?? null,
      },
      id,
      request.customerId,
    );
    if (refusal) throw new ProblemError(refusal.code, refusal.message);
    const agreement = agreements.get(id);
    if (agreement)
      throw new ProblemError(
        'refinanced_loan_in_agreement',
        `Loan ${id} has a live payment agreement, ${agreement}: it settles the loan, or ends first.`,
      );
    payoffs.push(refinancedPayoffOf(loan!, request.releaseDate));
  }
  const coverage = refinancingCoverage(request.requestedAmount, request.releaseDate, payoffs);
  if (!coverage.covered)
    throw new ProblemError('refinancing_not_covered', coverage.message, {
      payoff_amount: coverage.payoffTotal,
    });
  return { payoffs, balances: coverage.balances, newMoney: coverage.newMoney };
}
