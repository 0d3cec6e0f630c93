import { ApplicationFailure } from '@temporalio/common';
import { SANDBOX_PIX_KEY } from '../src/config.js';
import {
  activeChargeOf,
  closeCharge,
  findChargeById,
  insertCharge,
  type Charge,
} from '../src/db/queries/charges.js';
import { balancesByAccount, loanAccountBalances } from '../src/db/queries/ledger.js';
import { lockAndReadLoan, repaymentOf, repaymentTerms } from '../src/db/queries/loans.js';
import { businessDate } from '../src/domain/business-date.js';
import {
  chargeAmount,
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
import type { NewEvent } from '../src/webhooks/fan-out.js';
import type { ActivityDeps } from './index.js';
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

  return {
    /**
     * A new charge for the loan (contract §14), replacing its active one (`charge.cancelled`, then
     * `charge.created`): its amount fixed now (`at`, the customer's clock), its BR Code for the
     * lender's key (the sandbox's key for a sandbox loan). Written already (a retry): answered as
     * it is. Refused (non-retryable, by type) when the loan or the request no longer allows it.
     */
    async createCharge(input: {
      tenant: Tenant;
      loanId: string;
      request: ChargeRequest;
      at: string;
      hasCnpj: boolean;
      eventIds: { created: string; cancelled: string };
    }): Promise<{ chargeId: string; expiresAt: string; status: Charge['status'] }> {
      return writeWithEvents(deps, input.tenant, async (tx) => {
        const loan = await lockAndReadLoan(tx, input.tenant, input.loanId);
        if (!loan) return refuse('loan_not_found', `loan ${input.loanId} not found`);
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
          amount = withdrawalDue(
            loan.figures,
            balancesByAccount(await loanAccountBalances(tx, loan.id)),
          );
          if (amount <= 0)
            refuse(
              'invalid_state',
              'What was paid already covers the amount released: pay the loan off instead.',
            );
          expiresAt = withdrawalWindowEnds(loan.disbursedAt!);
        } else {
          const date = businessDate(now);
          const priced = chargeAmount(
            scope,
            repaymentOf(loan),
            date,
            repaymentTerms(loan),
            input.request.amount,
          );
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
            events.push(
              chargeEvent(input.eventIds.cancelled, chargeEventTypes.cancelled, cancelled),
            );
        }
        const txid = newTxid();
        const charge = await insertCharge(tx, {
          id: input.request.chargeId,
          partnerId: input.tenant.partnerId,
          environment: input.tenant.environment,
          loanId: input.loanId,
          status: 'active',
          scope,
          amount,
          txid,
          brCode: brCode({
            pixKey: input.tenant.environment === 'sandbox' ? SANDBOX_PIX_KEY : deps.loans.pix.key,
            merchantName: deps.loans.pix.merchantName,
            merchantCity: deps.loans.pix.city,
            amount,
            txid,
          }),
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
    },

    /**
     * The charge's time is up (`charge.expired`). Paid or replaced meanwhile, nothing is written;
     * answers whether it expired now.
     */
    async expireCharge(input: {
      tenant: Tenant;
      chargeId: string;
      eventId: string;
    }): Promise<boolean> {
      return writeWithEvents(deps, input.tenant, async (tx) => {
        const expired = await closeCharge(tx, input.chargeId, 'expired');
        return {
          result: expired !== undefined,
          events: expired ? [chargeEvent(input.eventId, chargeEventTypes.expired, expired)] : [],
        };
      });
    },
  };
}
