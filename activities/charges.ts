import { Context } from '@temporalio/activity';
import { chargeAmountOf } from '../src/commands/agreements.js';
import { ApplicationFailure } from '@temporalio/common';
import { SANDBOX_PIX_KEY } from '../src/config.js';
import {
  activeChargeOf,
  addRefundDue,
  closeCharge,
  findChargeById,
  insertCharge,
  type Charge,
} from '../src/db/queries/charges.js';
import type { DbOrTx } from '../src/db/client.js';
import { withdrawalBalances } from '../src/db/queries/assignments.js';
import { postEntries } from '../src/db/queries/ledger.js';
import { newId } from '../src/domain/ids.js';
import {
  assignedWithdrawalEntries,
  withdrawalEntries,
  type LedgerAccount,
} from '../src/domain/ledger/postings.js';
import { ledgerStep, loanEventTypes } from '../src/domain/loans/loans.js';
import { presentLoan } from '../src/presenters/loans.js';
import type { CreatedCharge } from '../workflows/loan/messages.js';
import {
  changeLoanRow,
  insertLoanTransaction,
  lockAndReadLoan,
  type LoanView,
} from '../src/db/queries/loans.js';
import { businessDate } from '../src/domain/business-date.js';
import {
  chargeEventTypes,
  chargeExpiry,
  withdrawalDue,
  withdrawalRefusal,
  withdrawalWindowEnds,
  type ChargeRequest,
} from '../src/domain/loans/charges.js';
import { brCode, newTxid } from '../src/domain/pix/br-code.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentCharge } from '../src/presenters/charges.js';
import type { WorkflowStart } from '../src/temporal/outbox.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';
import { dynamicChargesFor } from './dynamic-charges.js';
import type { ActivityDeps } from './index.js';
import { automaticRefund } from './refunds.js';
import { writeWithEvents } from './write-with-events.js';

/** A refusal of a charge request, answered to the caller by its type. */
const refuse = (type: string, message: string): never => {
  throw ApplicationFailure.nonRetryable(message, type);
};

export function createChargeActivities(deps: ActivityDeps) {
  const chargeEvent = (id: string, type: string, charge: Charge): NewEvent => ({
    id,
    type,
    data: presentCharge(charge),
    createdAt: charge.updatedAt,
  });

  /**
   * The withdrawal of a loan whose payments already reached the amount released (CDC art. 49):
   * cancelled at once (`withdrawal`), its IOF reversed and what was paid above the amount released
   * due back (`loan.refund_due`); its active charge cancelled. A `withdrawal` transaction of no
   * money received records it (step `withdrawal`: a loan is withdrawn once).
   */
  async function withdrawNow(
    tx: DbOrTx,
    tenant: Tenant,
    loan: LoanView,
    balances: Partial<Record<LedgerAccount, number>>,
    now: Date,
  ): Promise<{ result: CreatedCharge; events: NewEvent[]; starts?: WorkflowStart[] }> {
    const refund = -withdrawalDue(loan.figures, balances);
    const written = await insertLoanTransaction(tx, tenant, loan.id, {
      id: newId('txn'),
      step: ledgerStep.withdrawal,
      type: 'withdrawal',
      amount: 0,
      principalAmount: balances.loan_principal ?? 0,
      refundAmount: refund,
      occurredAt: now,
    });
    if (!written) throw new Error(`loan ${loan.id} withdrawn concurrently`);
    await postEntries(
      tx,
      tenant,
      written,
      loan.assignmentId
        ? assignedWithdrawalEntries(0, refund)
        : withdrawalEntries(0, refund, balances),
    );
    await changeLoanRow(tx, loan.id, { status: 'cancelled', cancellationReason: 'withdrawal' });
    if (refund > 0) await addRefundDue(tx, loan.id, refund);
    const events: NewEvent[] = [];
    const open = await activeChargeOf(tx, loan.id);
    const cancelled = open && (await closeCharge(tx, open.id, 'cancelled'));
    if (cancelled) events.push(chargeEvent(newId('evt'), chargeEventTypes.cancelled, cancelled));
    const after = (await lockAndReadLoan(tx, tenant, loan.id))!;
    const shown = presentLoan(after, deps.loans.signingUrl, businessDate(now));
    events.push({
      id: newId('evt'),
      type: loanEventTypes.cancelled,
      data: shown,
      createdAt: after.updatedAt,
    });
    if (refund > 0)
      events.push({
        id: newId('evt'),
        type: loanEventTypes.refundDue,
        data: { ...shown, refund: { amount: refund, reference: null } },
        createdAt: after.updatedAt,
      });
    // Money due back on a production loan leaves by devolução after REFUND_AFTER (contract §16).
    const starts = refund > 0 ? automaticRefund(deps, tenant, loan.id, written.id) : [];
    return { result: { withdrawn: true }, events, starts };
  }

  return {
    /**
     * A new charge for the loan (contract §14), replacing its active one (`charge.cancelled`, then
     * `charge.created`): its amount fixed now (`at`, the customer's clock), its BR Code for the
     * lender's key (the sandbox's key for a sandbox loan). Written already (a retry): answered as
     * it is. A withdrawal whose payments already reached the amount released asks for nothing:
     * the loan is withdrawn at once (`withdrawn`). Refused (non-retryable, by type) when the loan
     * or the request no longer allows it.
     */
    async createCharge(input: {
      tenant: Tenant;
      loanId: string;
      request: ChargeRequest;
      at: string;
      hasCnpj: boolean;
      eventIds: { created: string; cancelled: string };
    }): Promise<CreatedCharge> {
      const dynamic = dynamicChargesFor(deps, input.tenant);
      const created = await writeChargeOf(input, dynamic).catch(async (error: unknown) => {
        // Refused for good: this attempt's PSP call or an earlier attempt may have registered it.
        if (
          dynamic &&
          error instanceof ApplicationFailure &&
          error.nonRetryable &&
          (error.type?.startsWith('psp_') || Context.current().info.attempt > 1)
        )
          await dynamic.forget(input.request.chargeId, input.request.scope);
        throw error;
      });
      // The charge it replaced (or a withdrawal cancelled) can no longer be paid at the PSP.
      await dynamic?.removeClosed({ loanId: input.loanId });
      return created;
    },

    /**
     * The charge's time is up (`charge.expired`). Paid or replaced meanwhile, nothing is written;
     * answers whether it expired now. A production charge is then removed at the PSP (its own
     * time there ends with ours already: a cob's `expiracao`, a cobv's due date).
     */
    async expireCharge(input: {
      tenant: Tenant;
      chargeId: string;
      eventId: string;
    }): Promise<boolean> {
      const expired = await writeWithEvents(deps, input.tenant, async (tx) => {
        const expired = await closeCharge(tx, input.chargeId, 'expired');
        return {
          result: expired !== undefined,
          events: expired ? [chargeEvent(input.eventId, chargeEventTypes.expired, expired)] : [],
        };
      });
      await dynamicChargesFor(deps, input.tenant)?.removeClosed({ chargeId: input.chargeId });
      return expired;
    },
  };

  /** `createCharge`'s transaction: the charge written (registered at the PSP first, if dynamic). */
  function writeChargeOf(
    input: {
      tenant: Tenant;
      loanId: string;
      request: ChargeRequest;
      at: string;
      hasCnpj: boolean;
      eventIds: { created: string; cancelled: string };
    },
    dynamic: ReturnType<typeof dynamicChargesFor>,
  ): Promise<CreatedCharge> {
    return writeWithEvents(deps, input.tenant, async (tx) => {
      const loan = await lockAndReadLoan(tx, input.tenant, input.loanId);
      if (!loan) return refuse('loan_not_found', `loan ${input.loanId} not found`);
      // Withdrawn at once by this request already (a retry): nothing more to write.
      if (input.request.scope === 'withdrawal' && loan.cancellationReason === 'withdrawal')
        return { result: { withdrawn: true }, events: [] };
      const written = await findChargeById(tx, input.request.chargeId);
      if (written)
        return {
          result: {
            chargeId: written.id,
            expiresAt: written.expiresAt.toISOString(),
            status: written.status,
          },
          events: [],
        };
      if (loan.status !== 'active')
        refuse('invalid_state', `The loan is ${loan.status}; only an active loan takes charges.`);
      const now = new Date(input.at);
      const { scope } = input.request;
      let amount: number;
      let expiresAt: Date;
      if (scope === 'withdrawal') {
        const refusal = withdrawalRefusal(loan, input.hasCnpj, now);
        if (refusal) refuse('invalid_state', refusal);
        const balances = await withdrawalBalances(tx, loan);
        amount = withdrawalDue(loan.figures, balances);
        // What was paid covers what was released: nothing to ask, the loan is undone now.
        if (amount <= 0) return withdrawNow(tx, input.tenant, loan, balances, now);
        expiresAt = withdrawalWindowEnds(loan.disbursedAt!);
      } else {
        const date = businessDate(now);
        const priced = await chargeAmountOf(tx, loan, scope, date, input.request.amount);
        if (!priced.ok) return refuse(priced.code, priced.message);
        amount = priced.amount;
        const expiry = chargeExpiry(
          scope,
          now,
          input.request.expiresAt ? new Date(input.request.expiresAt) : undefined,
        );
        if (!expiry.ok) return refuse('invalid_expires_at', expiry.message);
        expiresAt = expiry.expiresAt;
      }
      const events: NewEvent[] = [];
      const previous = await activeChargeOf(tx, input.loanId);
      if (previous) {
        const cancelled = await closeCharge(tx, previous.id, 'cancelled');
        if (cancelled)
          events.push(chargeEvent(input.eventIds.cancelled, chargeEventTypes.cancelled, cancelled));
      }
      // Production's charge is the PSP's (registered before it is written: see `register`);
      // the sandbox's a static BR Code for a key no bank holds.
      const code = dynamic
        ? await dynamic.register(tx, {
            loan,
            chargeId: input.request.chargeId,
            scope,
            amount,
            expiresAt,
            at: now,
            date: businessDate(now),
          })
        : staticCode(input.tenant, amount);
      const charge = await insertCharge(tx, {
        id: input.request.chargeId,
        partnerId: input.tenant.partnerId,
        environment: input.tenant.environment,
        loanId: input.loanId,
        status: 'active',
        scope,
        amount,
        ...code,
        expiresAt,
      });
      events.push(chargeEvent(input.eventIds.created, chargeEventTypes.created, charge));
      return {
        result: {
          chargeId: charge.id,
          expiresAt: charge.expiresAt.toISOString(),
          status: 'active',
        },
        events,
      };
    });
  }

  /** A static BR Code the service composes (contract §14): the sandbox's, or without a PSP. */
  function staticCode(tenant: Tenant, amount: number) {
    const txid = newTxid();
    return {
      txid,
      brCode: brCode({
        pixKey: tenant.environment === 'sandbox' ? SANDBOX_PIX_KEY : deps.loans.pix.key,
        merchantName: deps.loans.pix.merchantName,
        merchantCity: deps.loans.pix.city,
        amount,
        txid,
      }),
    };
  }
}
