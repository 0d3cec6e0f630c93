import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { agreementSimulations, loanAgreements } from '../schema/index.js';
import { ofTenant } from '../tenancy.js';

export type AgreementSimulation = typeof agreementSimulations.$inferSelect;
export type Agreement = typeof loanAgreements.$inferSelect;
export type NewAgreement = typeof loanAgreements.$inferInsert;

export async function insertAgreementSimulation(
  tx: DbOrTx,
  simulation: typeof agreementSimulations.$inferInsert,
): Promise<AgreementSimulation> {
  const [row] = await tx.insert(agreementSimulations).values(simulation).returning();
  if (!row) throw new Error(`agreement simulation ${simulation.id} not written`);
  return row;
}

/** The loan's simulation `id`, in the caller's tenant. */
export async function findAgreementSimulation(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
  id: string,
): Promise<AgreementSimulation | undefined> {
  const [row] = await db
    .select()
    .from(agreementSimulations)
    .where(
      and(
        ofTenant(agreementSimulations, tenant),
        eq(agreementSimulations.loanId, loanId),
        eq(agreementSimulations.id, id),
      ),
    );
  return row;
}

/**
 * Writes the agreement; undefined when the loan has a live one already (or the simulation was
 * made into one): the partial unique indexes decide, so two racing requests make one agreement.
 */
export async function insertAgreement(
  tx: DbOrTx,
  agreement: NewAgreement,
): Promise<Agreement | undefined> {
  const [row] = await tx.insert(loanAgreements).values(agreement).onConflictDoNothing().returning();
  return row;
}

export async function findAgreement(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<Agreement | undefined> {
  const [row] = await db
    .select()
    .from(loanAgreements)
    .where(and(ofTenant(loanAgreements, tenant), eq(loanAgreements.id, id)));
  return row;
}

export function listLoanAgreements(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
  params: ListParams<'created_at'>,
): Promise<Page<Agreement>> {
  return paginate<Agreement>(db, {
    table: loanAgreements,
    idColumn: loanAgreements.id,
    sortColumn: loanAgreements.createdAt,
    tenant,
    within: eq(loanAgreements.loanId, loanId),
    params,
  });
}

/**
 * The agreement an acceptance link names (the link's HMAC is the proof: the hosted page reads it
 * whatever its partner, as the signing page reads its loan).
 */
export async function findAgreementOfLink(db: DbOrTx, id: string): Promise<Agreement | undefined> {
  const [row] = await db.select().from(loanAgreements).where(eq(loanAgreements.id, id));
  return row;
}

/**
 * The term of an agreement made before terms existed, once its page first shows one; undefined
 * when it had one already (a racing request wrote it: the same bytes, the renderer is pure).
 */
export async function recordAgreementTerm(
  db: DbOrTx,
  id: string,
  term: { key: string; sha256: string },
): Promise<Agreement | undefined> {
  const [row] = await db
    .update(loanAgreements)
    .set({ termKey: term.key, termSha256: term.sha256, updatedAt: sql`now()` })
    .where(and(eq(loanAgreements.id, id), isNull(loanAgreements.termKey)))
    .returning();
  return row;
}

/**
 * Every agreement of a loan, newest first, for staff (the back office reads a loan whatever its
 * partner: the loan id is the scope).
 */
export function agreementsOfLoan(db: DbOrTx, loanId: string): Promise<Agreement[]> {
  return db
    .select()
    .from(loanAgreements)
    .where(eq(loanAgreements.loanId, loanId))
    .orderBy(desc(loanAgreements.createdAt), desc(loanAgreements.id));
}

/** The loan's live agreement (`pending_acceptance`, `pending_entry` or `active`), if any. */
export async function liveAgreementOf(db: DbOrTx, loanId: string): Promise<Agreement | undefined> {
  const rows = await agreementsOfLoan(db, loanId);
  return rows.find((row) =>
    (['pending_acceptance', 'pending_entry', 'active'] as string[]).includes(row.status),
  );
}

/**
 * `pending_acceptance` or `pending_entry` → `lapsed` (its deadline passed, `endedAt` the customer's
 * clock); undefined when it was neither any more: nothing is written.
 */
export async function lapseAgreement(
  tx: DbOrTx,
  id: string,
  endedAt: Date,
): Promise<Agreement | undefined> {
  const [row] = await tx
    .update(loanAgreements)
    .set({ status: 'lapsed', endedAt, updatedAt: sql`now()` })
    .where(
      and(
        eq(loanAgreements.id, id),
        inArray(loanAgreements.status, ['pending_acceptance', 'pending_entry']),
      ),
    )
    .returning();
  return row;
}

/** The borrower's acceptance and its evidence: `pending_acceptance` → `pending_entry`. */
export async function acceptAgreement(
  tx: DbOrTx,
  id: string,
  evidence: {
    acceptedAt: Date;
    ipAddress: string | null;
    userAgent: string | null;
    channel: string;
    /** The term accepted (its SHA-256). */
    sha256: string | null;
  },
): Promise<Agreement | undefined> {
  const [row] = await tx
    .update(loanAgreements)
    .set({
      status: 'pending_entry',
      acceptedAt: evidence.acceptedAt,
      acceptedIp: evidence.ipAddress,
      acceptedUserAgent: evidence.userAgent,
      acceptedChannel: evidence.channel,
      acceptedSha256: evidence.sha256,
      updatedAt: sql`now()`,
    })
    .where(and(eq(loanAgreements.id, id), eq(loanAgreements.status, 'pending_acceptance')))
    .returning();
  return row;
}

/**
 * What the loan's workflow writes on an agreement as money reaches it or it ends (the loan's row
 * locked): its book, and a status change with its instant. Only from a live status.
 */
export async function changeAgreement(
  tx: DbOrTx,
  id: string,
  change: Partial<Pick<NewAgreement, 'book' | 'status' | 'activeAt' | 'endedAt'>>,
): Promise<Agreement> {
  const [row] = await tx
    .update(loanAgreements)
    .set({ ...change, updatedAt: sql`now()` })
    .where(
      and(
        eq(loanAgreements.id, id),
        inArray(loanAgreements.status, ['pending_acceptance', 'pending_entry', 'active']),
      ),
    )
    .returning();
  if (!row) throw new Error(`agreement ${id} is not live`);
  return row;
}
