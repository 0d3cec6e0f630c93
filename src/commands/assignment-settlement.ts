/**
 * An assignment's settlement (contract §19; docs/assignments.md), run once a second operator
 * approved it (the approval's workflow, through its activity, retried until it lands). One
 * database transaction: each loan derecognized (an `assignment` transaction: `loan_principal` and
 * the interest and late charges accrued to the day off the book against `assignment_receivable`,
 * the difference to `assignment_result`), marked sold (`assigned_to`, `assignment_id`), its
 * `loan.assigned` event, and the batch `settled`. Idempotent: a retry after it landed finds the
 * batch settled and does nothing; a refusal (a 4xx problem: the batch cancelled, the day passed,
 * a loan moved on since it was priced) ends the approval `failed` and changes nothing.
 */
import type { Approval } from '../db/queries/approvals.js';
import {
  changeAssignment,
  changeAssignmentLoan,
  loansOfAssignment,
} from '../db/queries/assignments.js';
import { balancesByAccount, loanAccountBalances, postEntries } from '../db/queries/ledger.js';
import {
  changeLoanRow,
  insertLoanTransaction,
  lockAndReadLoan,
  repaymentOf,
  repaymentTerms,
} from '../db/queries/loans.js';
import { soldRows, type SoldRow } from '../domain/assignments/pricing.js';
import { businessDate } from '../domain/business-date.js';
import { newId } from '../domain/ids.js';
import { assignmentEntries } from '../domain/ledger/postings.js';
import { carriedOn } from '../domain/assignments/carrying.js';
import { ledgerStep, loanEventTypes } from '../domain/loans/loans.js';
import type { Actors } from '../domain/operators.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError } from '../errors.js';
import { recordAndFanOut, startDeliveries, type NewEvent } from '../webhooks/fan-out.js';
import type { ApprovedCommandDeps } from './approvals.js';
import { assignmentNotFound, checkSettlementDay, lockedBatchForSettlement } from './assignments.js';

/** The same rows sold at the same values (jsonb keeps no key order: compared field by field). */
const sameRows = (a: readonly SoldRow[], b: readonly SoldRow[]) =>
  a.length === b.length &&
  a.every(
    (row, k) =>
      row.number === b[k]!.number &&
      row.due_date === b[k]!.due_date &&
      row.amount === b[k]!.amount &&
      row.present_value === b[k]!.present_value,
  );

export async function settleAssignment(
  deps: ApprovedCommandDeps,
  approval: Approval,
  actors: Actors,
): Promise<void> {
  const id = approval.request.assignment_id;
  if (typeof id !== 'string') throw assignmentNotFound(String(id));
  const now = deps.clock();
  const date = businessDate(now);
  const byTenant = new Map<string, { tenant: Tenant; events: NewEvent[] }>();
  const outbox = await deps.db.transaction(async (tx) => {
    const locked = await lockedBatchForSettlement(tx, id);
    if (locked === 'settled') return [];
    const { assignment, sold } = locked;
    checkSettlementDay(assignment, now);
    const priced = new Map((await loansOfAssignment(tx, id)).map((row) => [row.loanId, row]));
    for (const loan of sold) {
      const tenant: Tenant = { partnerId: loan.partnerId, environment: loan.environment };
      const sale = priced.get(loan.id)!;
      // Priced when submitted: a loan paid (or charged) since is priced on other rows.
      const rows = soldRows(
        repaymentOf(loan),
        assignment.discountRateMonthly,
        assignment.settlementDate,
      );
      if (!sameRows(rows, sale.rows ?? []))
        throw new ProblemError(
          'assignment_loans_changed',
          `Loan ${loan.id} changed since assignment ${id} was priced: cancel it and price a new one.`,
        );
      const balances = balancesByAccount(await loanAccountBalances(tx, loan.id));
      const carrying = carriedOn(
        repaymentOf(loan),
        repaymentTerms(loan),
        balances.loan_principal ?? 0,
        date,
      );
      const written = await insertLoanTransaction(tx, tenant, loan.id, {
        id: newId('txn'),
        step: ledgerStep.assigned(id),
        type: 'assignment',
        amount: sale.price!,
        principalAmount: carrying.principal,
        interestAmount: carrying.interest,
        lateFeeAmount: carrying.late_fee,
        lateInterestAmount: carrying.late_interest,
        actor: actors.actor ?? null,
        approvedBy: actors.approvedBy ?? null,
        occurredAt: now,
      });
      if (!written) throw new Error(`loan ${loan.id} sold twice in ${id}`);
      await postEntries(
        tx,
        tenant,
        written,
        assignmentEntries({
          price: sale.price!,
          principal: carrying.principal,
          interest: carrying.interest,
          lateFee: carrying.late_fee,
          lateInterest: carrying.late_interest,
        }),
      );
      await changeAssignmentLoan(tx, id, loan.id, { carrying });
      await changeLoanRow(tx, loan.id, {
        assignmentId: id,
        assignedTo: { name: assignment.assigneeName, cnpj: assignment.assigneeCnpj },
        assignedAt: now,
      });
      const after = (await lockAndReadLoan(tx, tenant, loan.id))!;
      const entry = byTenant.get(loan.partnerId) ?? { tenant, events: [] };
      entry.events.push({
        id: newId('evt'),
        type: loanEventTypes.assigned,
        data: deps.present(after),
        createdAt: after.updatedAt,
      });
      byTenant.set(loan.partnerId, entry);
    }
    await changeAssignment(tx, id, ['submitted'], {
      status: 'settled',
      settledAt: now,
      approvalId: approval.id,
    });
    const deliveries = [];
    for (const { tenant, events } of byTenant.values())
      deliveries.push(...(await recordAndFanOut(tx, tenant, events, deps.taskQueue)));
    return deliveries;
  });
  await startDeliveries(deps, outbox);
}
