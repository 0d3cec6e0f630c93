import { and, eq, inArray, isNotNull, isNull, or, sql } from 'drizzle-orm';
import {
  ERASED,
  redactCancellationReason,
  redactDisbursementAccount,
  redactPersonalData,
} from '../../domain/customers/erasure.js';
import { newId } from '../../domain/ids.js';
import type { SealedBox } from '../../domain/sealed-box.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import {
  biometricSessions,
  customerErasures,
  customers,
  documents,
  events,
  idempotencyKeys,
  loanAgreements,
  loans,
  loanSigners,
  verificationCodes,
  workflowOutbox,
} from '../schema/index.js';
import { workflowIds } from '../../temporal/workflow-ids.js';
import type { Customer } from './customers.js';
import { destroyCustomerDataKey } from './data-keys.js';

export type Erasure = typeof customerErasures.$inferSelect;

export async function findErasure(db: DbOrTx, customerId: string): Promise<Erasure | undefined> {
  const [row] = await db
    .select()
    .from(customerErasures)
    .where(eq(customerErasures.customerId, customerId));
  return row;
}

/** The customers registered again with an erased customer's identity, oldest first. */
export async function reRegistrationsOf(db: DbOrTx, customerId: string): Promise<string[]> {
  const rows = await db
    .select({ id: customers.id })
    .from(customers)
    .where(eq(customers.previousCustomerId, customerId))
    .orderBy(customers.createdAt, customers.id);
  return rows.map((row) => row.id);
}

/** The newest erased customer of the tenant whose identity had one of `hashes`. */
export async function findErasedIdentity(
  db: DbOrTx,
  tenant: Tenant,
  hashes: string[],
): Promise<string | undefined> {
  const [row] = await db
    .select({ id: customers.id })
    .from(customers)
    .where(
      and(
        eq(customers.partnerId, tenant.partnerId),
        eq(customers.environment, tenant.environment),
        inArray(customers.identityHash, hashes),
      ),
    )
    .orderBy(sql`${customers.erasedAt} desc`)
    .limit(1);
  return row?.id;
}

/** The workflows that act on the customer's behalf and hold its data while they run. */
export const customerWorkflowIds = (customerId: string, loanIds: string[]) => [
  workflowIds.customerOnboarding(customerId),
  workflowIds.creditOffers(customerId),
  workflowIds.deniedDocuments(customerId),
  ...loanIds.map(workflowIds.loan),
];

/**
 * The personal data of a customer erased at once (contract §15), in the caller's transaction:
 * the customer's fields replaced (the identity kept as `identityHash`), its documents' rows
 * deleted (their files' keys returned, for the object store), the verification codes of its
 * biometrics and signatures (addresses, user agents, signers' cpfs) deleted, the payloads of the
 * events about it redacted, its data key destroyed (its workflows' payloads in Temporal no longer
 * open), the workflow starts that carried its data deleted, and the stored
 * idempotent responses that show it deleted (a replay would show it again). What the law keeps —
 * loans, signers, the ledger, the contract files — is the caller's to leave or erase.
 */
export async function erasePersonalData(
  tx: DbOrTx,
  input: {
    customer: Customer;
    loanIds: string[];
    identityHash: string;
    at: Date;
    sealedBox: SealedBox;
  },
): Promise<{ fileKeys: string[] }> {
  const { customer, loanIds, at } = input;
  await tx
    .update(customers)
    .set({
      cpf: ERASED,
      cnpj: null,
      name: ERASED,
      email: ERASED,
      phone: ERASED,
      tradingName: null,
      externalId: null,
      kyc: customer.kyc.map((item) => ({ ...item, message: null })),
      deniedReason: customer.deniedReason === null ? null : ERASED,
      identityHash: input.identityHash,
      erasedAt: at,
      updatedAt: at,
    })
    .where(eq(customers.id, customer.id));

  const files = await tx
    .delete(documents)
    .where(eq(documents.customerId, customer.id))
    .returning({ key: documents.storageKey });

  // A capture page left open shows nothing more.
  await tx
    .update(biometricSessions)
    .set({ status: 'expired' })
    .where(
      and(eq(biometricSessions.customerId, customer.id), eq(biometricSessions.status, 'open')),
    );
  const sessions = tx
    .select({ id: biometricSessions.id })
    .from(biometricSessions)
    .where(eq(biometricSessions.customerId, customer.id));
  await tx
    .delete(verificationCodes)
    .where(
      or(
        and(
          eq(verificationCodes.purpose, 'biometrics'),
          inArray(verificationCodes.subjectId, sessions),
        ),
        loanIds.length > 0
          ? and(
              eq(verificationCodes.purpose, 'loan_signature'),
              inArray(verificationCodes.subjectId, loanIds),
            )
          : undefined,
      ),
    );

  await redactEventsAbout(tx, customer);

  // Crypto-shredding: what its workflows hold in Temporal (and any copy of their histories) was
  // sealed under this key, and no longer opens.
  await destroyCustomerDataKey(tx, { customerId: customer.id, newId: newId('cdk'), at });

  await tx
    .delete(workflowOutbox)
    .where(inArray(workflowOutbox.workflowId, customerWorkflowIds(customer.id, loanIds)));

  await deleteStoredResponsesShowing(tx, input.sealedBox, {
    scopes: [`partner:${customer.partnerId}:${customer.environment}`, 'ops'],
    ids: [customer.id, ...loanIds],
  });

  return { fileKeys: files.map((file) => file.key) };
}

/** Every event about the customer (its own, its offers', its loans'), personal fields replaced. */
async function redactEventsAbout(tx: DbOrTx, customer: Customer): Promise<void> {
  const about = await tx
    .select({ id: events.id, data: events.data })
    .from(events)
    .where(
      and(
        eq(events.partnerId, customer.partnerId),
        eq(events.environment, customer.environment),
        sql`coalesce(${events.data}->>'customer_id', ${events.data}->>'id') = ${customer.id}`,
      ),
    );
  for (const event of about) {
    await tx
      .update(events)
      .set({ data: redactPersonalData(event.data) as Record<string, unknown> })
      .where(eq(events.id, event.id));
  }
}

/**
 * Deletes the stored responses (kept 24 hours for replays) of `scopes` that name any of `ids`.
 * They are sealed, so each is opened to be read: the scan covers one partner's and ops' last day.
 */
async function deleteStoredResponsesShowing(
  tx: DbOrTx,
  sealedBox: SealedBox,
  filter: { scopes: string[]; ids: string[] },
): Promise<void> {
  const stored = await tx
    .select({
      scope: idempotencyKeys.scope,
      key: idempotencyKeys.key,
      body: idempotencyKeys.responseBody,
    })
    .from(idempotencyKeys)
    .where(
      and(inArray(idempotencyKeys.scope, filter.scopes), isNotNull(idempotencyKeys.responseBody)),
    );
  for (const row of stored) {
    // One that cannot be opened (sealed under a key no longer listed) is left to its 24 hours.
    let body = '';
    try {
      body = row.body === null ? '' : sealedBox.open(row.body);
    } catch {
      continue;
    }
    if (!filter.ids.some((id) => body.includes(id))) continue;
    await tx
      .delete(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, row.scope), eq(idempotencyKeys.key, row.key)));
  }
}

/**
 * What the law kept of an erased customer, erased when its period ends: each loan's signers (names,
 * cpfs, e-mails, the signatures' addresses and user agents) and where its money went. The ledger,
 * amounts and dates stay; the contract files' and agreement terms' keys are returned, for the
 * object store.
 */
export async function eraseRetainedRecords(
  tx: DbOrTx,
  customerId: string,
): Promise<{ fileKeys: string[] }> {
  const kept = await tx
    .select({ id: loans.id, contractKey: loans.contractKey, account: loans.disbursementAccount })
    .from(loans)
    .where(eq(loans.customerId, customerId));
  for (const loan of kept) await eraseLoanParties(tx, loan);
  // Their payment agreements' terms (which name the borrower) and acceptances' evidence go too.
  const terms =
    kept.length === 0
      ? []
      : await tx
          .update(loanAgreements)
          .set({ acceptedIp: null, acceptedUserAgent: null, acceptedChannel: null })
          .where(
            inArray(
              loanAgreements.loanId,
              kept.map((loan) => loan.id),
            ),
          )
          .returning({ key: loanAgreements.termKey });
  return {
    fileKeys: [
      ...kept.map((loan) => loan.contractKey),
      ...terms.flatMap((term) => (term.key ? [term.key] : [])),
    ],
  };
}

/**
 * An erased customer's loans that never became contracts (cancelled before their signatures, or
 * before the money left: nothing the law keeps), erased at once with the customer (issue 37): the
 * signers, the payout account and a partner's reason for cancelling, and the loan itself hidden
 * from every lookup (`erased_at`). Their contract files' keys are returned, for the object store.
 */
export async function eraseLoansNeverContracted(
  tx: DbOrTx,
  loanIds: string[],
  at: Date,
): Promise<{ fileKeys: string[] }> {
  if (loanIds.length === 0) return { fileKeys: [] };
  const never = await tx
    .select({
      id: loans.id,
      contractKey: loans.contractKey,
      account: loans.disbursementAccount,
      cancellationReason: loans.cancellationReason,
    })
    .from(loans)
    .where(inArray(loans.id, loanIds));
  for (const loan of never) {
    await eraseLoanParties(tx, loan);
    await tx
      .update(loans)
      .set({ cancellationReason: redactCancellationReason(loan.cancellationReason), erasedAt: at })
      .where(eq(loans.id, loan.id));
  }
  return { fileKeys: never.map((loan) => loan.contractKey) };
}

/** A loan's signers and where its money went (or would have gone), replaced. */
async function eraseLoanParties(
  tx: DbOrTx,
  loan: { id: string; account: Parameters<typeof redactDisbursementAccount>[0] },
): Promise<void> {
  await tx
    .update(loans)
    .set({ disbursementAccount: redactDisbursementAccount(loan.account) })
    .where(eq(loans.id, loan.id));
  // The cpf is half the signer's key: each becomes a placeholder unique within the loan.
  await tx
    .update(loanSigners)
    .set({
      name: ERASED,
      cpf: sql`${ERASED} || ' ' || ${loanSigners.position}`,
      email: null,
      ipAddress: null,
      userAgent: null,
      signedChannel: null,
    })
    .where(eq(loanSigners.loanId, loan.id));
}

/** The erasure's files are gone and its customer's workflows ended; complete unless records are kept. */
export async function markFilesDeleted(db: DbOrTx, customerId: string, at: Date): Promise<void> {
  const now = sql`${at.toISOString()}::timestamptz`;
  await db
    .update(customerErasures)
    .set({
      filesDeletedAt: sql`coalesce(${customerErasures.filesDeletedAt}, ${now})`,
      completedAt: sql`case when ${customerErasures.retainedUntil} is null then coalesce(${customerErasures.completedAt}, ${now}) else ${customerErasures.completedAt} end`,
    })
    .where(eq(customerErasures.customerId, customerId));
}

export async function markErasureCompleted(
  db: DbOrTx,
  customerId: string,
  at: Date,
): Promise<void> {
  await db
    .update(customerErasures)
    .set({ completedAt: at })
    .where(and(eq(customerErasures.customerId, customerId), isNull(customerErasures.completedAt)));
}

/** A denied customer's documents: their rows deleted, their files' keys returned. */
export async function deleteCustomerDocuments(
  db: DbOrTx,
  customerId: string,
): Promise<{ fileKeys: string[] }> {
  const files = await db
    .delete(documents)
    .where(eq(documents.customerId, customerId))
    .returning({ key: documents.storageKey });
  return { fileKeys: files.map((file) => file.key) };
}

/** Whether an erasure still waits for its retention period (its workflow answers the clock). */
export async function erasureWaits(db: DbOrTx, customerId: string): Promise<boolean> {
  const [row] = await db
    .select({ customerId: customerErasures.customerId })
    .from(customerErasures)
    .where(
      and(
        eq(customerErasures.customerId, customerId),
        isNotNull(customerErasures.retainedUntil),
        isNull(customerErasures.completedAt),
      ),
    );
  return row !== undefined;
}

/** Whether the customer still has documents (a denied one's wait for their period). */
export async function hasDocuments(db: DbOrTx, customerId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: documents.id })
    .from(documents)
    .where(eq(documents.customerId, customerId))
    .limit(1);
  return row !== undefined;
}
