import { sql as drizzleSql } from 'drizzle-orm';
import type postgres from 'postgres';
import type { DbOrTx } from '../client.js';

/**
 * Takes up to `wanted` tokens from a shared bucket in one statement: the row is created full (less
 * what it grants) or refilled for the time since it was last written, at `rate` a second up to
 * `burst`, then debited by what it grants: `wanted` if it holds that many whole tokens, else as
 * many as it holds. Concurrent statements on one key queue on its row lock, so every process sees
 * one bucket. Time is the database's (`now()`, so processes on several hosts agree), or `at` when
 * given (tests that move their own clock); a statement that got the lock after a later one does not
 * move the bucket back in time.
 */
const TAKE = `
with p as (
  select $1::text as key, $2::float8 as rate, $3::float8 as burst, $4::int as wanted,
         coalesce($5::timestamptz, now()) as at
)
insert into rate_limit_buckets as b (key, tokens, granted, updated_at, full_at)
select p.key, p.burst - f.g, f.g, p.at, p.at + make_interval(secs => f.g / p.rate)
  from p, lateral (select least(p.wanted, floor(p.burst))::int as g) f
on conflict (key) do update set (tokens, granted, updated_at, full_at) = (
  select l.level - f.g, f.g, greatest(b.updated_at, p.at),
         greatest(b.updated_at, p.at) + make_interval(secs => (p.burst - (l.level - f.g)) / p.rate)
    from p,
    lateral (select least(p.burst, b.tokens + p.rate *
               greatest(0, extract(epoch from p.at - b.updated_at)::float8)) as level) l,
    lateral (select least(p.wanted, greatest(0, floor(l.level)))::int as g) f
)
returning tokens, granted`;

export interface Taken {
  /** Tokens left in the bucket after this statement (fractional). */
  tokens: number;
  /** Tokens granted, 0 to `wanted`. */
  granted: number;
}

export async function takeTokens(
  sql: postgres.Sql,
  params: { key: string; ratePerSecond: number; burst: number; wanted: number; at?: Date },
): Promise<Taken> {
  const rows = await sql.unsafe<Taken[]>(
    TAKE,
    [
      params.key,
      params.ratePerSecond,
      params.burst,
      params.wanted,
      params.at?.toISOString() ?? null,
    ],
    { prepare: true },
  );
  const row = rows[0];
  if (!row) throw new Error('rate limit statement returned no row');
  return { tokens: Number(row.tokens), granted: Number(row.granted) };
}

/**
 * Housekeeping: drops buckets that have been full for `graceMs` (a missing row reads as a full
 * bucket, so nothing changes for anyone), `batch` rows at a time until none is left. A row written
 * meanwhile is re-checked under its lock and kept.
 */
export async function deleteFullRateLimitBuckets(
  db: DbOrTx,
  graceMs: number,
  batch = 10_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.execute(drizzleSql`
      delete from rate_limit_buckets
       where ctid in (select ctid from rate_limit_buckets
                       where full_at < now() - make_interval(secs => ${graceMs / 1000}::float8)
                       limit ${batch})
         and full_at < now() - make_interval(secs => ${graceMs / 1000}::float8)`);
    total += deleted.count;
    if (deleted.count < batch) return total;
  }
}
