import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { ofTenant } from '../tenancy.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { documents } from '../schema/index.js';

export type Document = typeof documents.$inferSelect;
export type NewDocument = typeof documents.$inferInsert;

export async function findDocument(
  db: DbOrTx,
  tenant: Tenant,
  params: { customerId: string; documentId: string },
): Promise<Document | undefined> {
  return db.query.documents.findFirst({
    where: and(
      ofTenant(documents, tenant),
      eq(documents.customerId, params.customerId),
      eq(documents.id, params.documentId),
    ),
  });
}

/** Idempotent: a retried activity finds the row in place. */
export async function insertDocument(db: DbOrTx, values: NewDocument): Promise<void> {
  await db.insert(documents).values(values).onConflictDoNothing();
}

/** The review outcome reaches the documents still awaiting review for these item types. */
export async function settleSubmittedDocuments(
  db: DbOrTx,
  tenant: Tenant,
  params: { customerId: string; types: string[]; status: 'approved' | 'rejected' },
): Promise<void> {
  if (params.types.length === 0) return;
  await db
    .update(documents)
    .set({ status: params.status, updatedAt: sql`now()` })
    .where(
      and(
        ofTenant(documents, tenant),
        eq(documents.customerId, params.customerId),
        inArray(documents.type, params.types),
        eq(documents.status, 'submitted'),
      ),
    );
}

/** The file name of the latest submitted document of each type, for the sandbox's magic values. */
export async function submittedFileNames(
  db: DbOrTx,
  tenant: Tenant,
  customerId: string,
): Promise<Record<string, string>> {
  const rows = await db
    .select({ type: documents.type, fileName: documents.fileName })
    .from(documents)
    .where(
      and(
        ofTenant(documents, tenant),
        eq(documents.customerId, customerId),
        eq(documents.status, 'submitted'),
      ),
    )
    .orderBy(documents.createdAt);
  return Object.fromEntries(rows.map((row) => [row.type, row.fileName]));
}

export const documentSorts = { created_at: documents.createdAt } as const;

export async function listDocuments(
  db: DbOrTx,
  tenant: Tenant,
  customerId: string,
  params: ListParams<keyof typeof documentSorts>,
): Promise<Page<Document>> {
  return paginate<Document>(db, {
    table: documents,
    idColumn: documents.id,
    sortColumn: documentSorts[params.sort],
    tenant,
    within: eq(documents.customerId, customerId),
    params,
  });
}
