/**
 * The baseline of `npm run bench:api`: Koa and postgres.js answering `GET /v3/customers/{id}` with
 * the same row the API reads (one customer of one partner and environment), as JSON, and nothing
 * else: no auth, rate limit, validation, logs or metrics. What the API's own work costs is the gap.
 */
import Koa from 'koa';
import postgres from 'postgres';

const sql = postgres(process.env.DATABASE_URL!, {
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
});
const partnerId = process.env.BARE_PARTNER_ID!;
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/readyz') return void (ctx.body = 'ok');
  const id = /^\/v3\/customers\/([a-z0-9_]+)$/.exec(ctx.path)?.[1];
  if (!id) return;
  const [row] = await sql`
    select * from customers
    where partner_id = ${partnerId} and environment = 'sandbox' and id = ${id}
    limit 1`;
  if (row) ctx.body = row;
});
app.listen(Number(process.env.PORT), '127.0.0.1');
