/**
 * Assignments (cessão, contract §19; docs/assignments.md): ops assemble a batch of production
 * loans for one buyer (`draft`, priced as it stands), freeze and price it (`submitted`), and ask
 * for its settlement on the settlement date — held for a second operator (dual control: an
 * approval of kind `assignment`, run by `assignment-settlement.ts`). Until settled it can be
 * cancelled, which lets its loans go.
 */
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../db/client.js';
import type { Approval } from '../db/queries/approvals.js';
import {
  changeAssignment,
  changeAssignmentLoan,
  findAssignment,
  insertAssignment,
  liveAssignmentsOf,
  loansOfAssignment,
  lockAssignment,
  releaseAssignmentLoans,
  type Assignment,
} from '../db/queries/assignments.js';
import { lockAndReadLoan, repaymentOf, type LoanView } from '../db/queries/loans.js';
import { liveAgreementsOf, liveRefinancersOf } from '../db/queries/refinancings.js';
import { approvals, loans } from '../db/schema/index.js';
import { whyNotAssignable, type AssignmentStatus } from '../domain/assignments/assignments.js';
import { priceOf, soldRows } from '../domain/assignments/pricing.js';
import { addDays, businessDate } from '../domain/business-date.js';
import { newId } from '../domain/ids.js';
import type { Operator } from '../domain/operators.js';
import { ProblemError, problems, type FieldError } from '../errors.js';
import { requestApproval, type ApprovalRequestDeps } from './approvals.js';

export interface AssignmentDeps {
  db: Db;
  clock: () => Date;
}

export interface NewAssignment {
  assignee: { name: string; cnpj: string };
  discount_rate_monthly: string;
  settlement_date: string;
  loan_ids: string[];
}

export const assignmentNotFound = (id: string) =>
  problems.notFound('assignment_not_found', `No assignment ${id}.`);

const PRODUCTION = { environment: 'production' as const };

/** How far ahead a batch may settle: a price is a day's, and a year out it means little. */
export const MAX_SETTLEMENT_DAYS_AHEAD = 366;

/** A settlement date is today or later (São Paulo), within a year: never dated in the past. */
function checkSettlementDate(settlementDate: string, now: Date, path = 'body.settlement_date') {
  const today = businessDate(now);
  const last = addDays(today, MAX_SETTLEMENT_DAYS_AHEAD);
  if (settlementDate < today || settlementDate > last)
    throw problems.validation([
      {
        path,
        code: 'out_of_range',
        message: `The settlement date is today (${today}) or later, up to ${last}: ${settlementDate} is not.`,
      },
    ]);
}

/**
 * Each loan locked (in id order, so two batches naming the same loans queue rather than deadlock)
 * and checked: it exists, can be sold (`whyNotAssignable`), and is in no other live batch. Every
 * refusal is reported, each at its place in `loan_ids`.
 */
async function lockSellableLoans(
  tx: DbOrTx,
  loanIds: readonly string[],
  exceptAssignment: string | null,
  path: (index: number) => string,
): Promise<LoanView[]> {
  const errors: FieldError[] = [];
  const found = new Map<string, LoanView>();
  for (const id of [...loanIds].sort()) {
    const [tenant] = await tx
      .select({ partnerId: loans.partnerId, environment: loans.environment })
      .from(loans)
      .where(and(eq(loans.id, id), isNull(loans.erasedAt)));
    const loan = tenant ? await lockAndReadLoan(tx, tenant, id) : undefined;
    if (loan) found.set(id, loan);
  }
  const live = await liveAssignmentsOf(tx, loanIds);
  const byPartner = new Map<string, string[]>();
  for (const loan of found.values())
    byPartner.set(loan.partnerId, [...(byPartner.get(loan.partnerId) ?? []), loan.id]);
  const agreements = new Map<string, string>();
  const refinancers = new Map<string, string>();
  for (const [partnerId, ids] of byPartner) {
    const tenant = { partnerId, ...PRODUCTION };
    for (const [k, v] of await liveAgreementsOf(tx, tenant, ids)) agreements.set(k, v);
    for (const [k, v] of await liveRefinancersOf(tx, tenant, ids)) refinancers.set(k, v);
  }
  loanIds.forEach((id, index) => {
    const loan = found.get(id);
    const other = live.get(id);
    const why = !loan
      ? 'no such loan'
      : other && other !== exceptAssignment
        ? `it is in assignment ${other}`
        : whyNotAssignable({
            ...loan,
            liveAgreement: agreements.has(id),
            beingRefinanced: refinancers.has(id),
          });
    if (why)
      errors.push({
        path: path(index),
        code: 'loan_not_assignable',
        message: `Loan ${id} cannot be sold: ${why}.`,
      });
  });
  if (errors.length > 0) throw problems.validation(errors);
  return loanIds.map((id) => found.get(id)!);
}

/** Prices each loan of the batch as it stands (its unpaid rows to the settlement date). */
async function priceLoans(
  tx: DbOrTx,
  assignment: Assignment,
  sold: readonly LoanView[],
): Promise<number> {
  let total = 0;
  for (const loan of sold) {
    const rows = soldRows(
      repaymentOf(loan),
      assignment.discountRateMonthly,
      assignment.settlementDate,
    );
    const price = priceOf(rows);
    total += price;
    await changeAssignmentLoan(tx, assignment.id, loan.id, { rows, price });
  }
  return total;
}

/** `POST /ops/v1/assignments`: a `draft`, priced as its loans stand now. */
export async function createAssignment(
  deps: AssignmentDeps,
  maker: Operator,
  request: NewAssignment,
): Promise<Assignment> {
  checkSettlementDate(request.settlement_date, deps.clock());
  return deps.db.transaction(async (tx) => {
    const sold = await lockSellableLoans(
      tx,
      request.loan_ids,
      null,
      (index) => `body.loan_ids.${index}`,
    );
    const draft = await insertAssignment(
      tx,
      {
        id: newId('asg'),
        ...PRODUCTION,
        assigneeName: request.assignee.name,
        assigneeCnpj: request.assignee.cnpj,
        discountRateMonthly: request.discount_rate_monthly,
        settlementDate: request.settlement_date,
        status: 'draft',
        createdBy: maker.actor.id,
      },
      sold.map((loan) => ({ loanId: loan.id, partnerId: loan.partnerId })),
    );
    const price = await priceLoans(tx, draft, sold);
    return (await changeAssignment(tx, draft.id, ['draft'], { price }))!;
  });
}

const wrongState = (assignment: Assignment, action: string) =>
  new ProblemError(
    'invalid_state',
    `Assignment ${assignment.id} is ${assignment.status}: ${action}.`,
  );

/** Under the batch's lock, one in `from`: the batch and its loans, locked and checked again. */
async function lockedBatch(
  tx: DbOrTx,
  id: string,
  from: readonly AssignmentStatus[],
  action: string,
): Promise<{ assignment: Assignment; sold: LoanView[] }> {
  const assignment = await lockAssignment(tx, id);
  if (!assignment) throw assignmentNotFound(id);
  if (!from.includes(assignment.status)) throw wrongState(assignment, action);
  const loanIds = (await loansOfAssignment(tx, id)).map((row) => row.loanId);
  const sold = await lockSellableLoans(tx, loanIds, id, (index) => `loan_ids.${index}`);
  return { assignment, sold };
}

/** The batch to settle, locked with its loans: 'settled' when an earlier attempt settled it. */
export async function lockedBatchForSettlement(
  tx: DbOrTx,
  id: string,
): Promise<{ assignment: Assignment; sold: LoanView[] } | 'settled'> {
  const assignment = await lockAssignment(tx, id);
  if (assignment?.status === 'settled') return 'settled';
  return lockedBatch(tx, id, ['submitted'], 'only a submitted batch is settled');
}

/** `…/submit`: the batch frozen, priced again as its loans stand now; `submitted`. */
export async function submitAssignment(
  deps: AssignmentDeps,
  maker: Operator,
  id: string,
): Promise<Assignment> {
  return deps.db.transaction(async (tx) => {
    const { assignment, sold } = await lockedBatch(tx, id, ['draft'], 'only a draft is submitted');
    checkSettlementDate(assignment.settlementDate, deps.clock(), 'settlement_date');
    const price = await priceLoans(tx, assignment, sold);
    return (await changeAssignment(tx, id, ['draft'], {
      status: 'submitted',
      price,
      submittedBy: maker.actor.id,
      submittedAt: deps.clock(),
    }))!;
  });
}

/** `…/cancel`: a draft or submitted batch ends; its loans may be sold in another. */
export async function cancelAssignment(deps: AssignmentDeps, id: string): Promise<Assignment> {
  return deps.db.transaction(async (tx) => {
    const assignment = await lockAssignment(tx, id);
    if (!assignment) throw assignmentNotFound(id);
    if (assignment.status === 'cancelled') return assignment; // a retry
    if (assignment.status === 'settled')
      throw wrongState(assignment, 'a settled sale is not undone');
    await releaseAssignmentLoans(tx, id);
    return (await changeAssignment(tx, id, ['draft', 'submitted'], {
      status: 'cancelled',
      cancelledAt: deps.clock(),
    }))!;
  });
}

/** 409 unless today (São Paulo) is the batch's settlement date. */
export function checkSettlementDay(assignment: Assignment, now: Date): void {
  const today = businessDate(now);
  if (today !== assignment.settlementDate)
    throw new ProblemError(
      'assignment_not_due',
      today < assignment.settlementDate
        ? `Assignment ${assignment.id} settles on ${assignment.settlementDate}, not today (${today}).`
        : `Assignment ${assignment.id}'s settlement date, ${assignment.settlementDate}, has passed: cancel it and price a new one.`,
    );
}

/** The approval of a batch's settlement still waiting or running, if any. */
async function pendingSettlement(db: DbOrTx, id: string): Promise<Approval | undefined> {
  const [row] = await db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.kind, 'assignment'),
        sql`${approvals.request}->>'assignment_id' = ${id}`,
        inArray(approvals.status, ['pending', 'executing']),
      ),
    )
    .limit(1);
  return row;
}

/**
 * `…/settle`: on the settlement date, a submitted batch's settlement is held for a second
 * operator of the `payments` desk (dual control); approved, `assignment-settlement.ts` runs it.
 */
export async function requestSettlement(
  deps: ApprovalRequestDeps,
  maker: Operator,
  id: string,
): Promise<{ approval: Approval; assignment: Assignment }> {
  const assignment = await findAssignment(deps.db, id);
  if (!assignment) throw assignmentNotFound(id);
  if (assignment.status !== 'submitted')
    throw wrongState(assignment, 'only a submitted batch is settled');
  checkSettlementDay(assignment, deps.clock());
  const waiting = await pendingSettlement(deps.db, id);
  if (waiting)
    throw new ProblemError(
      'invalid_state',
      `Assignment ${id}'s settlement already waits for approval ${waiting.id}.`,
    );
  const approval = await requestApproval(
    deps,
    maker,
    'assignment',
    { assignmentId: id },
    { assignment_id: id, price: assignment.price, settlement_date: assignment.settlementDate },
  );
  return { approval, assignment };
}
