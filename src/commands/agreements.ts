/**
 * Payment agreements (contract §17; docs/agreements.md): the partner simulates one on a late loan
 * and makes it from that simulation. The figures are the domain's (`domain/loans/agreements.ts`),
 * on the customer's clock; what the agreement later does to the loan is the loan workflow's.
 */
import {
  findAgreementSimulation,
  insertAgreement,
  insertAgreementSimulation,
  acceptAgreement,
  findAgreement,
  lapseAgreement,
  liveAgreementOf,
  type Agreement,
  type AgreementSimulation,
} from '../db/queries/agreements.js';
import { findLoan, repaymentOf, repaymentTerms, type LoanView } from '../db/queries/loans.js';
import { liveRefinancersOf } from '../db/queries/refinancings.js';
import { addDays, businessDate, startOfBusinessDate } from '../domain/business-date.js';
import { newId } from '../domain/ids.js';
import {
  agreementEventTypes,
  AgreementRefusal,
  simulateAgreement,
  type AgreementDiscount,
  type AgreementFigures,
  type AgreementScope,
} from '../domain/loans/agreements.js';
import type { Repayment } from '../domain/loans/allocation.js';
import type { DbOrTx } from '../db/client.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems, type FieldError } from '../errors.js';
import { presentAgreement } from '../presenters/agreements.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import { clockNow } from './customer-clock.js';
import { loanNotFound, type LoanDeps } from './loan-deps.js';
import { workflowIds } from '../temporal/workflow-ids.js';
import { agreementChangedSignal } from '../../workflows/loan/agreement-messages.js';
import {
  openBook,
  partsUnderAgreement,
  payoffUnderAgreement,
  type AgreementBook,
} from '../domain/loans/agreement-book.js';
import {
  chargeAmount,
  chargeAmountUnderAgreement,
  type ChargeAmount,
  type ChargeScope,
} from '../domain/loans/charges.js';
import { writeAgreementTerm } from './agreement-term.js';

export const agreementNotFound = (id: string) =>
  problems.notFound('agreement_not_found', `No agreement ${id}.`);
export const agreementSimulationNotFound = (id: string) =>
  problems.notFound('agreement_simulation_not_found', `No agreement simulation ${id}.`);

export interface AgreementSimulationCommand {
  rows: AgreementScope;
  discount_percentage?: number | undefined;
  discount_amount?: number | undefined;
  installments: number;
  first_due_date: string;
}

/** The end of a business date (São Paulo): the instant the next one starts, less a millisecond. */
const endOf = (date: string) => new Date(startOfBusinessDate(addDays(date, 1)) - 1);

async function activeLoan(deps: LoanDeps, tenant: Tenant, loanId: string): Promise<LoanView> {
  const loan = await findLoan(deps.db, tenant, loanId);
  if (!loan) throw loanNotFound(loanId);
  if (loan.status !== 'active')
    throw new ProblemError(
      'invalid_state',
      `The loan is ${loan.status}; only an active loan takes an agreement.`,
    );
  return loan;
}

const fieldOf: Record<AgreementRefusal['code'], Pick<FieldError, 'path' | 'code'>> = {
  nothing_overdue: { path: 'body.rows', code: 'nothing_overdue' },
  nothing_to_agree: { path: 'body.rows', code: 'nothing_overdue' },
  agreement_discount_above_charges: {
    path: 'body.discount_amount',
    code: 'discount_above_charges',
  },
  invalid_first_due_date: { path: 'body.first_due_date', code: 'out_of_range' },
};

/**
 * Simulates an agreement on the loan's rows as they stand today (the customer's clock), and keeps
 * the simulation until the end of that day (the debt's late charges change daily).
 */
export async function simulateLoanAgreement(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
  command: AgreementSimulationCommand,
): Promise<AgreementSimulation> {
  const loan = await activeLoan(deps, tenant, loanId);
  const now = clockNow(loan, deps.clock());
  const date = businessDate(now);
  const discount: AgreementDiscount =
    command.discount_percentage !== undefined
      ? { percentage: String(command.discount_percentage) }
      : command.discount_amount !== undefined
        ? { amount: command.discount_amount }
        : null;
  let figures;
  try {
    figures = simulateAgreement(
      repaymentOf(loan),
      {
        date,
        scope: command.rows,
        discount,
        installments: command.installments,
        firstDueDate: command.first_due_date,
      },
      repaymentTerms(loan),
    );
  } catch (error) {
    if (!(error instanceof AgreementRefusal)) throw error;
    throw problems.validation([{ ...fieldOf[error.code], message: error.message }]);
  }
  return insertAgreementSimulation(deps.db, {
    id: newId('ags'),
    partnerId: tenant.partnerId,
    environment: tenant.environment,
    loanId: loan.id,
    figures,
    validUntil: endOf(date),
  });
}

/**
 * Tells the loan's workflow that its live agreement changed, so it waits for the new deadline.
 * Told after the commit; a signal lost (a crash between) is made good by the workflow's next run,
 * which reads the agreement afresh, and by the lapse a command applies when it reads one past its
 * deadline (`lapsedUnaccepted`).
 */
async function tellLoanWorkflow(deps: LoanDeps, loanId: string): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(workflowIds.loan(loanId)).signal(agreementChangedSignal);
  } catch (error) {
    deps.logger.warn(
      { loanId, error: String(error) },
      'the loan workflow was not told of its agreement',
    );
  }
}

const agreementExists = (agreement: Pick<Agreement, 'id' | 'status'>) =>
  new ProblemError(
    'agreement_exists',
    `The loan has a live agreement, ${agreement.id} (${agreement.status}): one at a time.`,
  );

/**
 * An agreement still `pending_acceptance` or `pending_entry` past its deadline (the end of its
 * first row's due date, the customer's clock) is `lapsed` by the loan's workflow when the deadline
 * falls due (workflows/loan/agreements.ts); a command that reads one past it first (the workflow
 * not told of it yet, a lost signal) lapses it here (`loan.agreement_lapsed`), so a late one never
 * blocks the loan. A conditional write: racing writers lapse it once. Answers whether the
 * agreement is lapsed now.
 */
async function lapsedUnaccepted(
  deps: LoanDeps,
  tenant: Tenant,
  agreement: Agreement,
  now: Date,
): Promise<boolean> {
  const waiting = agreement.status === 'pending_acceptance' || agreement.status === 'pending_entry';
  if (!waiting || now <= agreement.acceptanceDeadline) return false;
  // Money reached it (an entry paid in part): undoing it changes the loan, the workflow's to write.
  if (agreement.book) return false;
  const deliveries = await deps.db.transaction(async (tx) => {
    const lapsed = await lapseAgreement(tx, agreement.id, now);
    if (!lapsed) return [];
    return recordAndFanOut(
      tx,
      tenant,
      [
        {
          id: newId('evt'),
          type: agreementEventTypes.lapsed,
          data: presentAgreement(lapsed, deps.agreements.acceptanceUrl),
          createdAt: lapsed.updatedAt,
        },
      ],
      deps.taskQueue,
    );
  });
  await startDeliveries(deps, deliveries);
  return true;
}

/**
 * Makes the agreement of a simulation: `pending_acceptance` until the borrower accepts it, at the
 * latest by the end of its first row's due date. One live agreement per loan (409
 * `agreement_exists`); a simulation past its day, or made before the loan last changed, is 409
 * `simulation_expired` (simulate again).
 */
export async function createLoanAgreement(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
  simulationId: string,
): Promise<Agreement> {
  const loan = await activeLoan(deps, tenant, loanId);
  // Contract §19: a sold loan's debt is its buyer's to renegotiate (docs/assignments.md).
  if (loan.assignmentId)
    throw new ProblemError(
      'loan_assigned',
      `Loan ${loan.id} was sold to ${loan.assignedTo?.name ?? 'a buyer'}: an agreement on it is the buyer’s to make.`,
    );
  const simulation = await findAgreementSimulation(deps.db, tenant, loan.id, simulationId);
  if (!simulation) throw agreementSimulationNotFound(simulationId);
  const now = clockNow(loan, deps.clock());
  const live = await liveAgreementOf(deps.db, loan.id);
  if (live && !(await lapsedUnaccepted(deps, tenant, live, now))) throw agreementExists(live);
  // A new loan that pays this one off at its release comes first (its release would refuse a
  // loan under an agreement made since, and cancel itself): the partner cancels it to agree.
  const refinancer = (await liveRefinancersOf(deps.db, tenant, [loan.id])).get(loan.id);
  if (refinancer)
    throw new ProblemError(
      'loan_already_being_refinanced',
      `Loan ${refinancer} refinances this loan at its release; an agreement waits until it is cancelled.`,
    );
  if (now > simulation.validUntil)
    throw new ProblemError(
      'simulation_expired',
      `The simulation was valid until ${simulation.validUntil.toISOString()}; simulate again.`,
    );
  if (loan.updatedAt > simulation.createdAt)
    throw new ProblemError(
      'simulation_expired',
      'The loan changed after the simulation (a payment, an overdue row): simulate again.',
    );
  const id = newId('agr');
  const acceptanceDeadline = endOf(simulation.figures.first_due_date);
  // The term is stored before its row, as a contract is: a refused write deletes it below, and
  // one whose outcome is unknown leaves a file the orphan sweeper removes a day later.
  const term = await writeAgreementTerm(
    deps,
    loan,
    { id, figures: simulation.figures, acceptanceDeadline },
    now,
  );
  const { agreement, deliveries } = await deps.db
    .transaction(async (tx) => {
      const written = await insertAgreement(tx, {
        id,
        partnerId: tenant.partnerId,
        environment: tenant.environment,
        loanId: loan.id,
        simulationId: simulation.id,
        status: 'pending_acceptance',
        figures: simulation.figures,
        acceptanceDeadline,
        termKey: term.key,
        termSha256: term.sha256,
      });
      if (!written) {
        const other = await liveAgreementOf(tx, loan.id);
        throw other
          ? agreementExists(other)
          : new ProblemError(
              'agreement_exists',
              `The simulation ${simulation.id} was made into an agreement already.`,
            );
      }
      const outbox = await recordAndFanOut(
        tx,
        tenant,
        [
          {
            id: newId('evt'),
            type: agreementEventTypes.created,
            data: presentAgreement(written, deps.agreements.acceptanceUrl),
            createdAt: written.createdAt,
          },
        ],
        deps.taskQueue,
      );
      return { agreement: written, deliveries: outbox };
    })
    .catch(async (error: unknown) => {
      await deps.files.delete(term.key).catch(() => {});
      throw error;
    });
  await startDeliveries(deps, deliveries);
  await tellLoanWorkflow(deps, loanId);
  return agreement;
}

/** How an acceptance was made: its evidence, as a signature's (contract §15). */
export interface AcceptanceEvidence {
  ipAddress: string | null;
  userAgent: string | null;
  /** `email:m***@e***.com` (the channel of the code the borrower entered), or `sandbox_api`. */
  channel: string;
  /** The SHA-256 of the term accepted. */
  sha256: string | null;
}

/**
 * The borrower's acceptance, now on the customer's clock: `pending_acceptance` → `pending_entry`
 * with its evidence, `loan.agreement_accepted`, the loan's workflow told. One past its deadline
 * lapses (409 `invalid_state`); one that is not `pending_acceptance` is answered as it is with
 * `accepted: false` (the caller says whether that is a refusal). A conditional write: of two
 * racing acceptances one is recorded.
 */
export async function acceptLoanAgreement(
  deps: LoanDeps,
  tenant: Tenant,
  agreement: Agreement,
  evidence: AcceptanceEvidence,
): Promise<{ agreement: Agreement; accepted: boolean }> {
  const loan = await findLoan(deps.db, tenant, agreement.loanId);
  if (!loan) throw loanNotFound(agreement.loanId);
  const now = clockNow(loan, deps.clock());
  if (await lapsedUnaccepted(deps, tenant, agreement, now))
    throw new ProblemError(
      'invalid_state',
      `The agreement's deadline, ${agreement.acceptanceDeadline.toISOString()}, passed: it lapsed.`,
    );
  if (agreement.status !== 'pending_acceptance') return { agreement, accepted: false };
  const { accepted, deliveries } = await deps.db.transaction(async (tx) => {
    const written = await acceptAgreement(tx, agreement.id, { acceptedAt: now, ...evidence });
    if (!written) return { accepted: undefined, deliveries: [] };
    const outbox = await recordAndFanOut(
      tx,
      tenant,
      [
        {
          id: newId('evt'),
          type: agreementEventTypes.accepted,
          data: presentAgreement(written, deps.agreements.acceptanceUrl),
          createdAt: written.updatedAt,
        },
      ],
      deps.taskQueue,
    );
    return { accepted: written, deliveries: outbox };
  });
  await startDeliveries(deps, deliveries);
  if (accepted) {
    await tellLoanWorkflow(deps, agreement.loanId);
    return { agreement: accepted, accepted: true };
  }
  // Accepted (or lapsed) meanwhile by a request racing this one: answer it as it stands.
  return { agreement: (await findAgreement(deps.db, tenant, agreement.id))!, accepted: false };
}

/**
 * The sandbox's acceptance (contract §17: like the signing helper): what the hosted page does
 * once the borrower entered the e-mailed code, recorded with the channel `sandbox_api` and the
 * agreement's term: `pending_entry`, `loan.agreement_accepted`. Accepting an agreement already
 * accepted answers it as it is; one past its deadline lapses (409 `invalid_state`).
 */
export async function acceptAgreementInSandbox(
  deps: LoanDeps,
  tenant: Tenant,
  agreementId: string,
  evidence: { ipAddress: string | null; userAgent: string | null },
): Promise<Agreement> {
  const agreement = await findAgreement(deps.db, tenant, agreementId);
  if (!agreement) throw agreementNotFound(agreementId);
  const answer = await acceptLoanAgreement(deps, tenant, agreement, {
    ...evidence,
    channel: 'sandbox_api',
    sha256: agreement.termSha256,
  });
  // Accepted already: the same acceptance again changes nothing.
  if (
    !answer.accepted &&
    answer.agreement.status !== 'pending_entry' &&
    answer.agreement.status !== 'active'
  )
    throw new ProblemError(
      'invalid_state',
      `The agreement is ${answer.agreement.status}; it takes no acceptance.`,
    );
  return answer.agreement;
}

/**
 * The loan's agreement while it takes payments (`pending_entry`, `active`), with what the loan
 * owes in its two parts (the agreement's rows, the uncovered ones); null when none does, and the
 * loan's own rows hold.
 */
export async function agreementTakingPayments(
  db: DbOrTx,
  loan: LoanView,
): Promise<{
  agreementId: string;
  figures: AgreementFigures;
  book: AgreementBook;
  repayment: Repayment;
} | null> {
  const live = await liveAgreementOf(db, loan.id);
  if (!live || (live.status !== 'pending_entry' && live.status !== 'active')) return null;
  const { book, loan: repayment } = live.book
    ? { book: live.book, loan: repaymentOf(loan) }
    : openBook(live.figures, repaymentOf(loan), {});
  return { agreementId: live.id, figures: live.figures, book, repayment };
}

/**
 * What settles the loan on `date` while its agreement takes payments: the agreement's rows and
 * the uncovered rows (docs/agreements.md); null when no agreement does, and the loan's own payoff
 * holds.
 */
export async function payoffWithAgreement(
  db: DbOrTx,
  loan: LoanView,
  date: string,
): Promise<number | null> {
  const taking = await agreementTakingPayments(db, loan);
  return taking
    ? payoffUnderAgreement(
        taking.repayment,
        taking.figures,
        taking.book,
        date,
        repaymentTerms(loan),
      )
    : null;
}

/**
 * What a charge of `scope` asks for on `date` (contract §14), under the loan's agreement while one
 * takes payments (contract §17: its rows first, then the rows it does not cover).
 */
export async function chargeAmountOf(
  db: DbOrTx,
  loan: LoanView,
  scope: Exclude<ChargeScope, 'withdrawal'>,
  date: string,
  stated?: number,
): Promise<ChargeAmount> {
  const terms = repaymentTerms(loan);
  const taking = await agreementTakingPayments(db, loan);
  return taking
    ? chargeAmountUnderAgreement(
        scope,
        partsUnderAgreement(taking.repayment, taking.figures, taking.book),
        date,
        terms,
        stated,
      )
    : chargeAmount(scope, repaymentOf(loan), date, terms, stated);
}
