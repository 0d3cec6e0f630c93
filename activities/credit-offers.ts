import { and, eq } from 'drizzle-orm';
import type { Tenant } from '../src/domain/tenant.js';
import {
  findCreditOffer,
  insertCreditOffer,
  updateCreditOffer,
  type CreditOffer,
} from '../src/db/queries/credit-offers.js';
import { customers, loans } from '../src/db/schema/index.js';
import type { DbOrTx } from '../src/db/client.js';
import {
  creditOfferEventTypes,
  sandboxOfferTerms,
  type CreditOfferStatus,
} from '../src/domain/credit/offers.js';
import type { OfferState, StoredOffer } from '../workflows/credit-offers/messages.js';
import { presentCreditOffer } from '../src/presenters/credit-offers.js';
import { writeWithEvents } from './write-with-events.js';
import type { ActivityDeps } from './index.js';

export function createCreditOfferActivities(deps: ActivityDeps) {
  /** The offer's move and its event, in one transaction; the event carries the offer as stored. */
  async function writeWithEvent(
    tenant: Tenant,
    eventId: string,
    change: (tx: DbOrTx) => Promise<CreditOffer | undefined>,
  ): Promise<CreditOffer | undefined> {
    return writeWithEvents(deps, tenant, async (tx) => {
      const offer = await change(tx);
      if (!offer) return { result: undefined, events: [] };
      return {
        result: offer,
        events: [
          {
            id: eventId,
            type: creditOfferEventTypes[offer.status],
            data: presentCreditOffer(offer),
            createdAt: offer.updatedAt,
          },
        ],
      };
    });
  }

  return {
    /**
     * Issues the customer's next offer with `credit_offer.available`, if the customer is active and
     * its analysis approved (read under a lock, so a denial committing at the same time is seen).
     * The id comes from the workflow: a retry finds the offer it wrote and records nothing twice.
     */
    async issueOffer(input: {
      tenant: Tenant;
      customerId: string;
      offerId: string;
      eventId: string;
      validityMs: number;
      /** When the offer is made, on the customer's clock (epoch ms; default now). */
      at?: number;
    }): Promise<{ validUntil: number; approvedAmount: number } | null> {
      const { tenant } = input;
      const offer = await writeWithEvent(tenant, input.eventId, async (tx) => {
        const [customer] = await tx
          .select()
          .from(customers)
          .where(
            and(
              eq(customers.id, input.customerId),
              eq(customers.partnerId, tenant.partnerId),
              eq(customers.environment, tenant.environment),
            ),
          )
          .for('update');
        const analysis = customer?.creditAnalysis;
        if (!customer || customer.status !== 'active' || customer.erasedAt) return undefined;
        // The analysis runs first thing at registration; if it has not been stored yet, retry.
        if (!analysis) throw new Error(`credit analysis of ${customer.id} not stored yet`);
        if (analysis.status !== 'approved' || analysis.approved_limit_amount === null)
          return undefined;
        const terms = {
          ...sandboxOfferTerms(customer.cpf, analysis.approved_limit_amount),
          // A longest term ops decided overrides the table's.
          ...(analysis.max_installments ? { maxInstallments: analysis.max_installments } : {}),
        };
        const now = new Date();
        return insertCreditOffer(tx, {
          id: input.offerId,
          partnerId: tenant.partnerId,
          environment: tenant.environment,
          customerId: customer.id,
          status: 'available',
          ...terms,
          validUntil: new Date((input.at ?? now.getTime()) + input.validityMs),
          createdAt: now,
          updatedAt: now,
        });
      });
      return offer
        ? { validUntil: offer.validUntil.getTime(), approvedAmount: offer.approvedAmount }
        : null;
    },

    /**
     * Moves the offer from `from` to `status` with the matching `credit_offer.*` event, and answers
     * where the offer stands. The move is conditional: if the offer is no longer as the workflow
     * last knew it (a loan accepted it meanwhile, or a retry finds the move done), nothing is
     * written and the stored state comes back for the workflow to adopt.
     */
    async recordOfferMove(input: {
      tenant: Tenant;
      offerId: string;
      from: OfferState;
      status: CreditOfferStatus;
      loanId: string | null;
      eventId: string;
    }): Promise<StoredOffer> {
      const moved = await writeWithEvent(input.tenant, input.eventId, (tx) =>
        updateCreditOffer(
          tx,
          input.tenant,
          input.offerId,
          { status: input.status, loanId: input.loanId },
          input.from,
        ),
      );
      const offer = moved ?? (await findCreditOffer(deps.db, input.tenant, input.offerId));
      if (!offer) throw new Error(`credit offer ${input.offerId} not found`);
      if (offer.status !== 'accepted' || !offer.loanId)
        return { status: offer.status, loanId: offer.loanId };
      // Accepted: whether its loan has ended, in case the loan's message never arrived.
      const [loan] = await deps.db
        .select({ status: loans.status })
        .from(loans)
        .where(eq(loans.id, offer.loanId));
      const loanEnded =
        loan?.status === 'finished'
          ? ('finished' as const)
          : loan?.status === 'cancelled' || loan?.status === 'error'
            ? ('released' as const)
            : null;
      return { status: offer.status, loanId: offer.loanId, loanEnded };
    },

    /** The offer's loan was repaid: the offer stays `accepted` but no longer counts as live. */
    async recordOfferSpent(input: { tenant: Tenant; offerId: string }): Promise<void> {
      await updateCreditOffer(deps.db, input.tenant, input.offerId, { spentAt: new Date() });
    },
  };
}
