/**
 * Ops decide a production customer's credit (contract §6 leaves the analysis to the lender):
 * production has no credit bureau integrated, so its analysis waits, `manual_review_required`,
 * until ops approve a limit or reject. An approval of a customer already `active` starts its
 * credit-offers workflow; one made before the KYC review lets the activation start it.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import type { Customer } from '../db/queries/customers.js';
import { customers } from '../db/schema/index.js';
import type { CreditAnalysis } from '../domain/customers/kyc.js';
import { ProblemError, problems } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Client } from '@temporalio/client';
import { creditOffersStart, type OfferTiming } from '../temporal/credit-workflows.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';

export type CreditDecision =
  | { decision: 'approve'; approved_limit_amount: number; max_installments?: number | undefined }
  | { decision: 'reject'; reason: string };

export interface DecideCreditDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
  offers: OfferTiming;
  clock: () => Date;
}

export async function decideCredit(
  deps: DecideCreditDeps,
  customerId: string,
  decision: CreditDecision,
): Promise<Customer> {
  const { customer, start } = await deps.db.transaction(async (tx) => {
    // Locked: the KYC review's activation reads the analysis under the same lock, so exactly one
    // of the two starts the offers.
    const [current] = await tx
      .select()
      .from(customers)
      .where(eq(customers.id, customerId))
      .for('update');
    if (!current) throw problems.notFound('customer_not_found', `No customer ${customerId}.`);
    if (current.creditAnalysis?.status !== 'manual_review_required')
      throw new ProblemError(
        'invalid_state',
        current.creditAnalysis
          ? `The credit analysis is already ${current.creditAnalysis.status}.`
          : 'The credit analysis has not run yet; retry in a moment.',
      );
    if (current.status === 'denied')
      throw new ProblemError('invalid_state', 'The customer is denied.');
    const analysis: CreditAnalysis =
      decision.decision === 'approve'
        ? {
            status: 'approved',
            approved_limit_amount: decision.approved_limit_amount,
            max_installments: decision.max_installments ?? null,
            decided_at: deps.clock().toISOString(),
            reason: null,
          }
        : {
            status: 'rejected',
            approved_limit_amount: null,
            decided_at: deps.clock().toISOString(),
            reason: decision.reason,
          };
    const [customer] = await tx
      .update(customers)
      .set({ creditAnalysis: analysis })
      .where(eq(customers.id, customerId))
      .returning();
    const start =
      analysis.status === 'approved' && current.status === 'active'
        ? await enqueueWorkflowStart(
            tx,
            creditOffersStart(
              { partnerId: current.partnerId, environment: current.environment, customerId },
              deps.taskQueue,
              deps.offers,
            ),
          )
        : undefined;
    return { customer: customer!, start };
  });
  if (start) await dispatchWorkflowStart(deps, start);
  return customer;
}
