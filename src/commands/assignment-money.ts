/**
 * The money of a settled sale (contract §19; docs/assignments.md, "The money of the sale"): ops
 * record the buyer's payment of the price, which clears `assignment_receivable`, and each day's
 * remittance to the buyer of what servicing collected for it, which clears `payable_to_assignee`.
 * Each is one database transaction under the batch's lock — the row, its entries — and happens
 * once: sent again with the same reference it answers the first and records nothing.
 */
import type { Db, DbOrTx } from '../db/client.js';
import { postAssignmentEntries } from '../db/queries/assignment-ledger.js';
import {
  insertAssignmentTransaction,
  lockAssignment,
  moneyOfAssignment,
  remittancesOn,
  type Assignment,
  type AssignmentTransaction,
} from '../db/queries/assignments.js';
import { businessDate, startOfBusinessDate } from '../domain/business-date.js';
import { newId } from '../domain/ids.js';
import { priceReceivedEntries, remittanceEntries } from '../domain/ledger/postings.js';
import type { Operator } from '../domain/operators.js';
import { ProblemError, problems, type FieldError } from '../errors.js';
import { assignmentNotFound } from './assignments.js';

export interface AssignmentMoneyDeps {
  db: Db;
  clock: () => Date;
}

async function lockSettled(tx: DbOrTx, id: string, what: string): Promise<Assignment> {
  const assignment = await lockAssignment(tx, id);
  if (!assignment) throw assignmentNotFound(id);
  if (assignment.status !== 'settled' || assignment.settledAt === null || !assignment.price)
    throw new ProblemError(
      'invalid_state',
      `Assignment ${id} is ${assignment.status}: ${what} only once it settled.`,
    );
  return assignment;
}

export interface PricePayment {
  amount: number;
  paid_at: string;
  reference: string;
}

/**
 * `POST /ops/v1/assignments/{id}/price-payment`: the buyer paid the whole price of a settled
 * batch — the cash in (`collections_clearing`) against `assignment_receivable`. Refused (422)
 * unless `amount` is the price and `paid_at` lies between the settlement date and now; once per
 * batch (again with the same reference: the first answered; another reference: 409).
 */
export async function receivePrice(
  deps: AssignmentMoneyDeps,
  operator: Operator,
  id: string,
  payment: PricePayment,
): Promise<{ assignment: Assignment; received: AssignmentTransaction }> {
  return deps.db.transaction(async (tx) => {
    const assignment = await lockSettled(tx, id, 'its price is received');
    const price = assignment.price!;
    const [earlier] = (await moneyOfAssignment(tx, id)).filter(
      (row) => row.type === 'price_received',
    );
    if (earlier) {
      if (earlier.reference === payment.reference) return { assignment, received: earlier };
      throw new ProblemError(
        'assignment_price_received',
        `Assignment ${id}'s price was received already (reference ${earlier.reference}).`,
      );
    }
    const paidAt = new Date(payment.paid_at);
    const now = deps.clock();
    const errors: FieldError[] = [];
    if (payment.amount !== price)
      errors.push({
        path: 'body.amount',
        code: 'not_the_price',
        message: `The buyer pays the whole price, ${price} centavos, at once: not ${payment.amount}.`,
      });
    if (paidAt.getTime() > now.getTime())
      errors.push({
        path: 'body.paid_at',
        code: 'in_the_future',
        message: `${payment.paid_at} is later than now (${now.toISOString()}).`,
      });
    else if (paidAt.getTime() < startOfBusinessDate(assignment.settlementDate))
      errors.push({
        path: 'body.paid_at',
        code: 'out_of_range',
        message: `The price is paid on the settlement date (${assignment.settlementDate}, São Paulo) or later.`,
      });
    if (errors.length > 0) throw problems.validation(errors);
    const received = await insertAssignmentTransaction(tx, {
      id: newId('txn'),
      assignmentId: id,
      type: 'price_received',
      amount: price,
      reference: payment.reference,
      actor: operator.actor,
      paidAt,
    });
    // The receivable exists from the settlement: money the buyer sent that morning is booked
    // then, so no trial balance of the day shows the buyer owing less than nothing.
    const occurredAt = new Date(Math.max(paidAt.getTime(), assignment.settledAt!.getTime()));
    await postAssignmentEntries(tx, { id: received.id, occurredAt }, priceReceivedEntries(price));
    return { assignment, received };
  });
}

/**
 * `POST /ops/v1/assignments/{id}/remittances/{date}/payment`: the day's collections on the
 * batch's loans, as its report totals them, were sent to the buyer — `payable_to_assignee`
 * against the cash out (`disbursement_clearing`). A day is paid once it is over (São Paulo: money
 * may still come in until then), and once (again with the same reference: the first answered;
 * another reference: 409); a day that owes the buyer nothing has nothing to pay (409).
 */
export async function payRemittance(
  deps: AssignmentMoneyDeps,
  operator: Operator,
  id: string,
  date: string,
  reference: string,
): Promise<AssignmentTransaction> {
  return deps.db.transaction(async (tx) => {
    const assignment = await lockSettled(tx, id, 'a day is remitted');
    const earlier = (await moneyOfAssignment(tx, id)).find(
      (row) => row.type === 'remitted' && row.remittanceDate === date,
    );
    if (earlier) {
      if (earlier.reference === reference) return earlier;
      throw new ProblemError(
        'remittance_paid',
        `Assignment ${id}'s remittance of ${date} was paid already (reference ${earlier.reference}).`,
      );
    }
    const now = deps.clock();
    const today = businessDate(now);
    if (date >= today)
      throw new ProblemError(
        'remittance_day_open',
        `${date} is not over (São Paulo, today is ${today}): its remittance is paid from the next day on.`,
      );
    const total = (await remittancesOn(tx, id, date)).reduce((sum, row) => sum + row.amount, 0);
    if (total <= 0)
      throw new ProblemError(
        'nothing_to_remit',
        `Assignment ${id}'s loans owe its buyer nothing for ${date} (the day's total is ${total}).`,
      );
    const remitted = await insertAssignmentTransaction(tx, {
      id: newId('txn'),
      assignmentId: assignment.id,
      type: 'remitted',
      remittanceDate: date,
      amount: total,
      reference,
      actor: operator.actor,
      paidAt: now,
    });
    await postAssignmentEntries(tx, { id: remitted.id, occurredAt: now }, remittanceEntries(total));
    return remitted;
  });
}
