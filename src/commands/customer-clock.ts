import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../db/client.js';
import { clockOffset, findSandboxClock } from '../db/queries/sandbox-clocks.js';
import { customers, sandboxClocks } from '../db/schema/index.js';
import type { ClockStatus } from '../db/schema/sandbox.js';
import { ofTenant } from '../db/tenancy.js';
import type { Environment } from '../domain/environments.js';
import type { Tenant } from '../domain/tenant.js';
import { problems } from '../errors.js';
import type { Logger } from '../logger.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { workflowIds, workflowTypes } from '../temporal/workflow-ids.js';
import type { Client } from '@temporalio/client';
import type { ClockAdvanceInput } from '../../workflows/sandbox-clock/messages.js';

/** How far one call may move a clock (contract §12). */
export const MAX_ADVANCE_DAYS = 400;
const DAY_MS = 86_400_000;

/**
 * Now on a customer's clock (contract §12): real time in production; in the sandbox, real time
 * plus however far the customer's clock was advanced. Business dates (`valid_until`, due dates,
 * `paid_at`, `release_date`) are read off it; `created_at` and `updated_at` stay real.
 */
export async function customerNow(
  db: DbOrTx,
  customer: { environment: Environment; customerId: string },
  realNow: Date,
): Promise<Date> {
  if (customer.environment !== 'sandbox') return realNow;
  return shifted(realNow, await clockOffset(db, customer.customerId));
}

/** Now on a record's customer's clock (a loan, an offer: read with its customer's offset). */
export const clockNow = (record: { clockOffsetMs: number }, realNow: Date): Date =>
  shifted(realNow, record.clockOffsetMs);

const shifted = (realNow: Date, offsetMs: number) =>
  offsetMs === 0 ? realNow : new Date(realNow.getTime() + offsetMs);

export interface CustomerClockView {
  customerId: string;
  now: Date;
  status: ClockStatus;
}

export interface ClockDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
  clock: () => Date;
}

const customerNotFound = (customerId: string) =>
  problems.notFound('customer_not_found', `No customer ${customerId}.`);

/** A sandbox customer's clock as it reads now: real time until it is first moved. */
export async function readCustomerClock(
  deps: Pick<ClockDeps, 'db' | 'clock'>,
  tenant: Tenant,
  customerId: string,
): Promise<CustomerClockView> {
  // An erased customer's clock still runs: its retention period is timed by it.
  const [customer] = await deps.db
    .select({ id: customers.id })
    .from(customers)
    .where(and(ofTenant(customers, tenant), eq(customers.id, customerId)));
  if (!customer) throw customerNotFound(customerId);
  const clock = await findSandboxClock(deps.db, customerId);
  return {
    customerId,
    now: shifted(deps.clock(), clock?.offsetMs ?? 0),
    status: clock?.status ?? 'ready',
  };
}

/**
 * Moves a sandbox customer's clock forward to `advanceTo` (contract §12): never back, at most 400
 * days a call. One transaction writes the new offset, a new generation and `advancing`, and the
 * outbox start of that generation's workflow, which makes everything that fell due happen and
 * then marks the clock `ready`. The customer row is locked for it: a transaction starting a
 * workflow on the customer's behalf (a loan, the credit offers) locks it too, so that workflow
 * either is committed before the advance lists the customer's workflows or starts with the new
 * offset.
 */
export async function advanceCustomerClock(
  deps: ClockDeps,
  tenant: Tenant,
  customerId: string,
  advanceTo: Date,
): Promise<CustomerClockView> {
  const written = await deps.db.transaction(async (tx) => {
    const [customer] = await tx
      .select({ id: customers.id })
      .from(customers)
      .where(and(ofTenant(customers, tenant), eq(customers.id, customerId)))
      .for('no key update');
    if (!customer) throw customerNotFound(customerId);
    const realNow = deps.clock();
    const current = await findSandboxClock(tx, customerId);
    const now = shifted(realNow, current?.offsetMs ?? 0);
    const latest = new Date(now.getTime() + MAX_ADVANCE_DAYS * DAY_MS);
    if (advanceTo.getTime() < now.getTime() || advanceTo.getTime() > latest.getTime())
      throw problems.validation([
        {
          path: 'body.advance_to',
          code: 'out_of_range',
          message:
            advanceTo.getTime() < now.getTime()
              ? `The clock never goes back: it reads ${now.toISOString()}.`
              : `At most ${MAX_ADVANCE_DAYS} days a call: no later than ${latest.toISOString()}.`,
        },
      ]);
    const offsetMs = advanceTo.getTime() - realNow.getTime();
    const generation = (current?.generation ?? 0) + 1;
    await tx
      .insert(sandboxClocks)
      .values({ customerId, offsetMs, generation, status: 'advancing' })
      .onConflictDoUpdate({
        target: sandboxClocks.customerId,
        set: { offsetMs, generation, status: 'advancing', updatedAt: sql`now()` },
      });
    const input: ClockAdvanceInput = { customerId, ...tenant, offsetMs, generation };
    const start = await enqueueWorkflowStart(tx, {
      workflowId: workflowIds.sandboxClock(customerId, generation),
      workflowType: workflowTypes.sandboxClock,
      taskQueue: deps.taskQueue,
      args: [input],
      searchAttributes: {
        PartnerId: tenant.partnerId,
        Environment: tenant.environment,
        CustomerId: customerId,
      },
      summary: `Sandbox clock of ${customerId}, advance ${generation} (partner ${tenant.partnerId})`,
    });
    return { start, now: advanceTo };
  });
  await dispatchWorkflowStart(deps, written.start);
  return { customerId, now: written.now, status: 'advancing' };
}
