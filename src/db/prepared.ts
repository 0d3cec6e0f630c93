import type { DbOrTx } from './client.js';

/**
 * A query built once per database handle, then run with parameters (`sql.placeholder`). Drizzle
 * otherwise rebuilds the SQL text from its query objects on every call: a fifth of the CPU of
 * `GET /v3/customers/{id}` before this (docs/architecture.md, "Performance"). The pool keeps its
 * queries; a transaction, being a handle of its own, builds its own once.
 */
export function prepared<Q>(build: (db: DbOrTx) => Q): (db: DbOrTx) => Q {
  const built = new WeakMap<DbOrTx, Q>();
  return (db) => {
    let query = built.get(db);
    if (query === undefined) {
      query = build(db);
      built.set(db, query);
    }
    return query;
  };
}
