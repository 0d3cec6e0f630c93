import { and, eq } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import {
  eraseLoansNeverContracted,
  erasePersonalData,
  findErasure,
  type Erasure,
} from '../db/queries/erasure.js';
import { clockOffset } from '../db/queries/sandbox-clocks.js';
import { creditOffers, customerErasures, customers, loans } from '../db/schema/index.js';
import { presentCreditOffer } from '../presenters/credit-offers.js';
import { identityHashes } from '../domain/customers/erasure.js';
import { newId } from '../domain/ids.js';
import type { KeyRing } from '../domain/key-ring.js';
import type { Actor } from '../domain/operators.js';
import type { SealedBox } from '../domain/sealed-box.js';
import { ProblemError, problems } from '../errors.js';
import type { Logger } from '../logger.js';
import { customerErasureStart } from '../temporal/customer-data-workflows.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';

export interface ErasureDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
  clock: () => Date;
  /** DATA_ENCRYPTION_KEYS: what the identity's keyed hash is derived from, and what seals stored responses. */
  dataKeys: KeyRing;
  sealedBox: SealedBox;
  /** RETENTION_AFTER_LOAN_END. */
  retentionAfterLoanEndMs: number;
}

/** Loans in force: their contract is being performed, so the customer's data is still needed. */
const loansInForce = new Set(['awaiting_signatures', 'processing', 'active']);

/**
 * Erases a customer (contract §15, LGPD art. 18), in one transaction: the personal data replaced
 * or deleted wherever PostgreSQL holds it (see `erasePersonalData`), the erasure recorded with its
 * operator, a `customer.erased` event, and the start of `customer-erasure/{cust_id}`, which ends
 * the customer's workflows, deletes the files and — when loans keep contracts for the law —
 * erases those when `retained_until` passes on the customer's clock. Asking again answers the
 * erasure already made. A customer with a loan in force is refused (409): the contract being
 * performed needs it; erase once the loan has ended. Loans that never became contracts are
 * erased at once, their contract files with the documents.
 */
export async function eraseCustomer(
  deps: ErasureDeps,
  customerId: string,
  actor: Actor,
): Promise<{ erasure: Erasure; created: boolean }> {
  const outcome = await deps.db.transaction(async (tx) => {
    const [customer] = await tx
      .select()
      .from(customers)
      .where(eq(customers.id, customerId))
      .for('update');
    if (!customer) throw problems.notFound('customer_not_found', `No customer ${customerId}.`);
    const existing = await findErasure(tx, customerId);
    if (existing) return { erasure: existing, created: false, start: undefined, deliveries: [] };

    const owned = await tx
      .select({
        id: loans.id,
        status: loans.status,
        updatedAt: loans.updatedAt,
        disbursedAt: loans.disbursedAt,
      })
      .from(loans)
      .where(eq(loans.customerId, customerId));
    const inForce = owned.find((loan) => loansInForce.has(loan.status));
    if (inForce)
      throw new ProblemError(
        'invalid_state',
        `The customer's loan ${inForce.id} is ${inForce.status}: its contract needs the customer's data until it ends (cancel it, or erase after it is finished).`,
      );

    const at = deps.clock();
    const offsetMs = customer.environment === 'sandbox' ? await clockOffset(tx, customerId) : 0;
    // A loan whose money never left never became a contract (cancelled unsigned or before its
    // disbursement, or failed): the law keeps nothing of it, so it goes now (issue 37).
    const contracts = owned.filter((loan) => loan.disbursedAt !== null);
    const neverContracted = owned.filter((loan) => loan.disbursedAt === null);
    // The last contract's end, on the customer's clock (its offset now is at least what it was then).
    const lastEnd = Math.max(...contracts.map((loan) => loan.updatedAt.getTime()));
    const retainedUntil =
      contracts.length > 0 ? lastEnd + offsetMs + deps.retentionAfterLoanEndMs : null;
    const [identityHash] = identityHashes(deps.dataKeys, customer);
    const loanIds = owned.map((loan) => loan.id);
    const personal = await erasePersonalData(tx, {
      customer,
      loanIds,
      identityHash: identityHash!,
      at,
      sealedBox: deps.sealedBox,
    });
    const uncontracted = await eraseLoansNeverContracted(
      tx,
      neverContracted.map((loan) => loan.id),
      at,
    );
    const fileKeys = [...personal.fileKeys, ...uncontracted.fileKeys];
    const [erasure] = await tx
      .insert(customerErasures)
      .values({
        customerId,
        partnerId: customer.partnerId,
        environment: customer.environment,
        requestedBy: actor,
        erasedAt: at,
        retainedUntil: retainedUntil === null ? null : new Date(retainedUntil),
      })
      .returning();
    const tenant = { partnerId: customer.partnerId, environment: customer.environment };
    // An offer still available is withdrawn, as on a denial: nobody is left to take it.
    const withdrawn = await tx
      .update(creditOffers)
      .set({ status: 'cancelled', updatedAt: at })
      .where(and(eq(creditOffers.customerId, customerId), eq(creditOffers.status, 'available')))
      .returning();
    const deliveries = await recordAndFanOut(
      tx,
      tenant,
      [
        ...withdrawn.map((offer) => ({
          id: newId('evt'),
          type: 'credit_offer.cancelled',
          createdAt: at,
          actor,
          data: presentCreditOffer(offer),
        })),
        {
          id: newId('evt'),
          type: 'customer.erased',
          createdAt: at,
          actor,
          data: {
            id: customerId,
            erased_at: at.toISOString(),
            retained_until: retainedUntil === null ? null : new Date(retainedUntil).toISOString(),
            loan_ids: loanIds,
          },
        },
      ],
      deps.taskQueue,
    );
    const start = await enqueueWorkflowStart(
      tx,
      customerErasureStart(
        { customerId, ...tenant, fileKeys, retainedUntil, clockOffsetMs: offsetMs },
        deps.taskQueue,
      ),
    );
    return { erasure: erasure!, created: true, start, deliveries };
  });
  if (outcome.start) await dispatchWorkflowStart(deps, outcome.start);
  await startDeliveries(deps, outcome.deliveries);
  deps.logger.info(
    { customerId, created: outcome.created, by: actor.id },
    'customer erasure recorded',
  );
  return { erasure: outcome.erasure, created: outcome.created };
}
