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
  type AgreementScope,
} from '../domain/loans/agreements.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems, type FieldError } from '../errors.js';
import { presentAgreement } from '../presenters/agreements.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import { clockNow } from './customer-clock.js';
import { loanNotFound, type LoanDeps } from './loan-deps.js';
import { workflowIds } from '../temporal/workflow-ids.js';
import { agreementChangedSignal } from '../../workflows/loan/agreement-messages.js';
import { openBook, payoffUnderAgreement } from '../domain/loans/agreement-book.js';

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
          data: presentAgreement(lapsed),
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
  const { agreement, deliveries } = await deps.db.transaction(async (tx) => {
    const written = await insertAgreement(tx, {
      id: newId('agr'),
      partnerId: tenant.partnerId,
      environment: tenant.environment,
      loanId: loan.id,
      simulationId: simulation.id,
      status: 'pending_acceptance',
      figures: simulation.figures,
      acceptanceDeadline: endOf(simulation.figures.first_due_date),
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
          data: presentAgreement(written),
          createdAt: written.createdAt,
        },
      ],
      deps.taskQueue,
    );
    return { agreement: written, deliveries: outbox };
  });
  await startDeliveries(deps, deliveries);
  await tellLoanWorkflow(deps, loanId);
  return agreement;
}

/**
 * The sandbox's acceptance (contract §17: like the signing helper): what the hosted page will do
 * once the borrower entered the e-mailed code, recorded with the channel `sandbox_api`, now on
 * the customer's clock: `pending_entry`, `loan.agreement_accepted`. Accepting an agreement already
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
  const loan = await findLoan(deps.db, tenant, agreement.loanId);
  if (!loan) throw loanNotFound(agreement.loanId);
  const now = clockNow(loan, deps.clock());
  if (await lapsedUnaccepted(deps, tenant, agreement, now))
    throw new ProblemError(
      'invalid_state',
      `The agreement's deadline, ${agreement.acceptanceDeadline.toISOString()}, passed: it lapsed.`,
    );
  // Accepted already: the same acceptance again changes nothing.
  if (agreement.status === 'pending_entry' || agreement.status === 'active') return agreement;
  if (agreement.status !== 'pending_acceptance')
    throw new ProblemError(
      'invalid_state',
      `The agreement is ${agreement.status}; it takes no acceptance.`,
    );
  const { accepted, deliveries } = await deps.db.transaction(async (tx) => {
    const written = await acceptAgreement(tx, agreement.id, {
      acceptedAt: now,
      ...evidence,
      channel: 'sandbox_api',
    });
    if (!written) return { accepted: undefined, deliveries: [] };
    const outbox = await recordAndFanOut(
      tx,
      tenant,
      [
        {
          id: newId('evt'),
          type: agreementEventTypes.accepted,
          data: presentAgreement(written),
          createdAt: written.updatedAt,
        },
      ],
      deps.taskQueue,
    );
    return { accepted: written, deliveries: outbox };
  });
  await startDeliveries(deps, deliveries);
  if (accepted) await tellLoanWorkflow(deps, agreement.loanId);
  // Accepted (or lapsed) meanwhile by a request racing this one: answer it as it stands.
  return accepted ?? (await findAgreement(deps.db, tenant, agreementId))!;
}

/**
 * What settles the loan on `date` while its agreement takes payments (`pending_entry`, `active`):
 * the agreement's rows and the uncovered rows (docs/agreements.md); null when no agreement does,
 * and the loan's own payoff holds.
 */
export async function payoffWithAgreement(
  db: LoanDeps['db'],
  loan: LoanView,
  date: string,
): Promise<number | null> {
  const live = await liveAgreementOf(db, loan.id);
  if (!live || (live.status !== 'pending_entry' && live.status !== 'active')) return null;
  const { book, loan: repayment } = live.book
    ? { book: live.book, loan: repaymentOf(loan) }
    : openBook(live.figures, repaymentOf(loan), {});
  return payoffUnderAgreement(repayment, live.figures, book, date, repaymentTerms(loan));
}
