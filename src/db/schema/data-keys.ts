import { pgTable, text } from 'drizzle-orm/pg-core';
import { timestampColumn as ts } from './columns.js';
import { customers } from './customers.js';

/**
 * Each customer's data key (crypto-shredding, contract §15 "Erasure"): the payloads of the
 * customer's workflows are sealed under it before Temporal sees them (src/temporal/payload-codec.ts),
 * and it exists only here, wrapped by TEMPORAL_PAYLOAD_KEYS. Erasing the customer destroys it
 * (`wrapped_key` null, `destroyed_at` set, for good): their histories, and every backup or archive
 * of them, no longer decode. A destroyed key's row stays, so no new key is made for the customer.
 */
export const customerDataKeys = pgTable('customer_data_keys', {
  /** `cdk_…`: named in the metadata of every payload sealed under it. */
  id: text('id').primaryKey(),
  customerId: text('customer_id')
    .notNull()
    .unique()
    .references(() => customers.id),
  /** `v1.<payload key id>.<iv, ciphertext and tag, base64url>`; null once destroyed. */
  wrappedKey: text('wrapped_key'),
  createdAt: ts('created_at').notNull().defaultNow(),
  destroyedAt: ts('destroyed_at'),
});
