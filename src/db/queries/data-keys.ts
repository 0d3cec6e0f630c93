import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { customerDataKeys, customers, loans } from '../schema/index.js';

export type CustomerDataKeyRow = typeof customerDataKeys.$inferSelect;

/**
 * The customer's data key row, made with `wrapped` when it has none yet and the customer exists
 * and is not erased; undefined when there is no such customer (or an erased one without a row).
 * Two processes making one at once keep the first.
 */
export async function customerDataKeyFor(
  db: DbOrTx,
  customerId: string,
  make: () => { id: string; wrappedKey: string },
): Promise<CustomerDataKeyRow | undefined> {
  const existing = await customerDataKeyOf(db, customerId);
  if (existing) return existing;
  const { id, wrappedKey } = make();
  await db.execute(sql`
    insert into ${customerDataKeys} (id, customer_id, wrapped_key)
    select ${id}, ${customerId}, ${wrappedKey}
    where exists (select 1 from ${customers} where id = ${customerId} and erased_at is null)
    on conflict (customer_id) do nothing`);
  return customerDataKeyOf(db, customerId);
}

export async function customerDataKeyOf(
  db: DbOrTx,
  customerId: string,
): Promise<CustomerDataKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(customerDataKeys)
    .where(eq(customerDataKeys.customerId, customerId));
  return row;
}

export async function customerDataKeyById(
  db: DbOrTx,
  id: string,
): Promise<CustomerDataKeyRow | undefined> {
  const [row] = await db.select().from(customerDataKeys).where(eq(customerDataKeys.id, id));
  return row;
}

/** A held key sealed again under the current payload key (a rotation of TEMPORAL_PAYLOAD_KEYS). */
export async function rewrapCustomerDataKey(
  db: DbOrTx,
  id: string,
  wrappedKey: string,
): Promise<void> {
  await db
    .update(customerDataKeys)
    .set({ wrappedKey })
    .where(and(eq(customerDataKeys.id, id), isNull(customerDataKeys.destroyedAt)));
}

/**
 * Destroys the customer's data key for good (crypto-shredding): what was sealed under it no longer
 * opens anywhere. A customer without one gets a destroyed row, so none is ever made for it.
 */
export async function destroyCustomerDataKey(
  db: DbOrTx,
  input: { customerId: string; newId: string; at: Date },
): Promise<void> {
  const at = sql`${input.at.toISOString()}::timestamptz`;
  await db.execute(sql`
    insert into ${customerDataKeys} (id, customer_id, wrapped_key, destroyed_at)
    values (${input.newId}, ${input.customerId}, null, ${at})
    on conflict (customer_id) do update set wrapped_key = null, destroyed_at = ${at}
    where ${customerDataKeys.destroyedAt} is null`);
}

/** The customer a loan belongs to (its workflow's payloads are sealed under that customer's key). */
export async function customerOfLoan(db: DbOrTx, loanId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ customerId: loans.customerId })
    .from(loans)
    .where(eq(loans.id, loanId));
  return row?.customerId;
}
