import { inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { documents, loanAgreements, loans } from '../db/schema/index.js';
import type { FileStore } from './file-store.js';

/** An object older than this that no row names is an orphan (an upload whose row never came). */
export const ORPHAN_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Removes stored files that no document, loan or agreement (its term) names, once they are a day old: what is left of
 * an upload whose database write failed in a way that left its outcome unclear (the request
 * removes the object itself when the write was refused). Younger objects are never touched, so a
 * write still in flight keeps its file.
 */
export async function sweepOrphanedFiles(
  deps: { db: Db; files: FileStore },
  now: Date,
): Promise<{ examined: number; removed: number }> {
  let examined = 0;
  let removed = 0;
  for await (const page of deps.files.list()) {
    const old = page.filter((file) => now.getTime() - file.lastModified.getTime() >= ORPHAN_AGE_MS);
    examined += page.length;
    if (old.length === 0) continue;
    const keys = old.map((file) => file.key);
    const [named, contracts, terms] = await Promise.all([
      deps.db
        .select({ key: documents.storageKey })
        .from(documents)
        .where(inArray(documents.storageKey, keys)),
      deps.db
        .select({ key: loans.contractKey })
        .from(loans)
        .where(inArray(loans.contractKey, keys)),
      deps.db
        .select({ key: loanAgreements.termKey })
        .from(loanAgreements)
        .where(inArray(loanAgreements.termKey, keys)),
    ]);
    const kept = new Set([...named, ...contracts, ...terms].map((row) => row.key));
    for (const key of keys) {
      if (kept.has(key)) continue;
      await deps.files.delete(key);
      removed++;
    }
  }
  return { examined, removed };
}
