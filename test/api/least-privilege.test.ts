import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkDatabaseAtStart } from '../../src/db/start-check.js';
import { createLogger } from '../../src/logger.js';
import { projectRoot } from '../../src/project-root.js';
import { spawnApiProcess } from '../helpers/api-process.js';
import { files, registerCustomer, upload } from '../helpers/customers.js';
import { client, createPartner, tokenFor } from '../helpers/partners.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

/**
 * Least privilege in PostgreSQL (issue 27): the API and the worker connect as a role that reads
 * and writes rows and can change no table; migrations are a command of their own, run as the owner.
 */

const run = promisify(execFile);
const logger = createLogger('silent', 'test');

/** The PostgreSQL error a statement fails with: its SQLSTATE and message. */
async function refusal(sql: postgres.Sql, statement: string) {
  try {
    await sql.unsafe(statement);
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { code, message };
  }
  throw new Error(`${statement} was not refused`);
}

describe("the application's database role", () => {
  let app: postgres.Sql;
  let owner: postgres.Sql;
  let stack: TestStack;
  beforeAll(async () => {
    app = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    owner = postgres(inject('ownerDatabaseUrl'), { max: 1, onnotice: () => {} });
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await app?.end();
    await owner?.end();
  });

  it('is what the API and the worker connect as, not the owner', async () => {
    expect(new URL(stack.config.databaseUrl).username).toBe('embedded_credit_app');
    const [row] = await app<[{ role: string; superuser: boolean }]>`
      select current_user as role, rolsuper as superuser from pg_roles where rolname = current_user`;
    expect(row).toEqual({ role: 'embedded_credit_app', superuser: false });
    const [{ tableowner }] = await app<[{ tableowner: string }]>`
      select tableowner from pg_tables where tablename = 'customers'`;
    expect(tableowner).not.toBe('embedded_credit_app');
  });

  it('is refused create table, alter table and drop table', async () => {
    expect(await refusal(app, 'create table least_privilege_probe (id int)')).toEqual({
      code: '42501',
      message: 'permission denied for schema public',
    });
    expect(await refusal(app, 'alter table customers add column probe int')).toEqual({
      code: '42501',
      message: 'must be owner of table customers',
    });
    expect(await refusal(app, 'drop table customers')).toEqual({
      code: '42501',
      message: 'must be owner of table customers',
    });
    expect(await refusal(app, 'truncate idempotency_keys')).toEqual({
      code: '42501',
      message: 'permission denied for table idempotency_keys',
    });
    // The ledger is append-only for it (a trigger refuses any change too, for the owner as well).
    expect(await refusal(app, 'delete from ledger_entries')).toEqual({
      code: '42501',
      message: 'permission denied for table ledger_entries',
    });
  });

  it('cannot rewrite the audit trail, nor remove an approval, nor change one once decided (issue 37)', async () => {
    // A real ops command leaves its audit row and outcome, written as this role.
    const created = await fetch(`${stack.baseUrl}/ops/v1/partners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Audited partner' }),
    });
    expect(created.status).toBe(201);
    const requestId = created.headers.get('x-request-id')!;
    const [row] = await app<[{ id: string }]>`
      select id from ops_audit where request_id = ${requestId}`;
    const audit = row.id;
    const [outcome] = await app<[{ status: number }]>`
      select status from ops_audit_outcomes where audit_id = ${audit}`;
    expect(outcome.status).toBe(201);
    for (const statement of [
      `update ops_audit set actor_id = 'op_someone_else' where id = '${audit}'`,
      `delete from ops_audit where id = '${audit}'`,
      `update ops_audit_outcomes set status = 403 where audit_id = '${audit}'`,
      `delete from ops_audit_outcomes where audit_id = '${audit}'`,
    ])
      expect(await refusal(app, statement), statement).toMatchObject({ code: '42501' });
    // Not even the owner changes it: a trigger refuses every role.
    expect(
      await refusal(
        owner,
        `update ops_audit set actor_id = 'op_someone_else' where id = '${audit}'`,
      ),
    ).toEqual({ code: '23001', message: 'ops_audit is append-only: UPDATE refused' });
    // An outcome is written once.
    expect(
      await refusal(
        app,
        `insert into ops_audit_outcomes (audit_id, status, finished_at) values ('${audit}', 200, now())`,
      ),
    ).toMatchObject({ code: '23505' });

    // Approvals: the steps the workflow takes pass; nothing else does.
    const approval = (status: string) => {
      const id = `apr_${randomBytes(16).toString('hex')}`;
      return {
        id,
        insert: `insert into approvals (id, kind, loan_id, partner_id, environment, request, maker_id, status, expires_at)
          values ('${id}', 'payment', 'ln_${'0'.repeat(32)}', 'ptn_x', 'production',
                  '{"amount": 50000, "reference": "R1"}', 'op_maker', '${status}', now() + interval '1 day')`,
      };
    };
    const decided = approval('pending');
    await app.unsafe(decided.insert);
    await app.unsafe(
      `update approvals set status = 'executing', checker_id = 'op_checker', decided_at = now() where id = '${decided.id}'`,
    );
    await app.unsafe(`update approvals set status = 'approved' where id = '${decided.id}'`);
    for (const change of [
      `status = 'pending'`,
      `checker_id = 'op_puppet'`,
      `outcome = '{"reason": "rewritten"}'`,
      `request = '{"amount": 5000000, "reference": "R1"}'`,
    ])
      expect(
        await refusal(app, `update approvals set ${change} where id = '${decided.id}'`),
        change,
      ).toMatchObject({
        code: '23001',
        message: expect.stringContaining('is decided (approved)') as unknown,
      });
    expect(await refusal(app, `delete from approvals where id = '${decided.id}'`)).toMatchObject({
      code: '42501',
    });
    const pending = approval('pending');
    await app.unsafe(pending.insert);
    // What a pending one asks for never changes, and it is never approved without executing.
    expect(
      await refusal(
        app,
        `update approvals set request = '{"amount": 5000000, "reference": "R1"}' where id = '${pending.id}'`,
      ),
    ).toMatchObject({
      code: '23001',
      message: expect.stringContaining('never changes') as unknown,
    });
    expect(
      await refusal(app, `update approvals set status = 'approved' where id = '${pending.id}'`),
    ).toMatchObject({ code: '23001', message: expect.stringContaining('not a step') as unknown });
    await app.unsafe(`update approvals set status = 'rejected' where id = '${pending.id}'`);
    expect(
      await refusal(app, `update approvals set status = 'executing' where id = '${pending.id}'`),
    ).toMatchObject({ code: '23001' });
  });

  it('does its work: the API and the worker on it register a customer and store a document, through the rate limit, idempotency and the outbox', async () => {
    const partner = await createPartner(stack);
    const api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
    const customer = await registerCustomer(api);
    // The same request twice under one key: the second is the stored answer.
    const key = { 'Idempotency-Key': randomUUID() };
    const credential = { method: 'POST', body: { name: 'least privilege' }, headers: key };
    expect((await api('/v3/auth/credentials', credential)).status).toBe(201);
    const replayed = await api('/v3/auth/credentials', credential);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const uploaded = await upload(api, customer.id, 'selfie', {
      bytes: files.jpeg(),
      name: 'me.jpg',
      mime: 'image/jpeg',
    });
    expect(uploaded.status).toBe(201);
    // The unlogged rate-limit table holds this credential's bucket, written as this role.
    const [{ n }] = await app<[{ n: number }]>`select count(*)::int as n from rate_limit_buckets`;
    expect(n).toBeGreaterThan(0);
  });

  it('is what production requires: an owner or superuser stops the API and the worker, this role starts them', async () => {
    await expect(checkDatabaseAtStart(app, 'production', logger)).resolves.toBeUndefined();
    await expect(checkDatabaseAtStart(owner, 'production', logger)).rejects.toThrow(
      /postgres is a superuser; postgres may create tables in schema public/,
    );
  });
});

describe('the migrate command', () => {
  const database = `least_privilege_${randomBytes(4).toString('hex')}`;
  const role = `least_privilege_app_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  let ownerUrl: string;
  let appUrl: string;
  let admin: postgres.Sql;
  let stack: TestStack;

  beforeAll(async () => {
    admin = postgres(inject('ownerDatabaseUrl'), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${database}`);
    const url = new URL(inject('ownerDatabaseUrl'));
    url.pathname = `/${database}`;
    ownerUrl = url.toString();
    url.username = role;
    url.password = password;
    appUrl = url.toString();
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
    await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  const migrate = (env: Record<string, string>) =>
    run(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/main/migrate.ts')], {
      cwd: projectRoot,
      env: { ...process.env, ...env },
    });

  it('an API on an unmigrated database stops, saying to run it', async () => {
    await expect(
      spawnApiProcess(stack, { env: { DATABASE_URL: ownerUrl, LOG_LEVEL: 'info' } }),
    ).rejects.toThrow(/lacks migration \d{4}_\w+ \(it has none\).*npm run db:migrate/);
  });

  it('migrates as the owner, creates the role and grants it rows; an API then starts on it', async () => {
    const first = await migrate({
      NODE_ENV: 'production',
      MIGRATION_DATABASE_URL: ownerUrl,
      DATABASE_URL: appUrl,
    });
    expect(first.stdout).toMatch(
      new RegExp(`migrated: \\d+ applied, latest \\d{4}_\\w+; role ${role} created and granted`),
    );
    // Again: nothing to apply, the grants made again (a later migration's tables are covered).
    const again = await migrate({
      NODE_ENV: 'production',
      MIGRATION_DATABASE_URL: ownerUrl,
      DATABASE_URL: appUrl,
    });
    expect(again.stdout).toMatch(new RegExp(`migrated: 0 applied, .*; role ${role} granted`));

    const appSql = postgres(appUrl, { max: 1, onnotice: () => {} });
    try {
      expect(await refusal(appSql, 'drop table customers')).toMatchObject({ code: '42501' });
      await expect(checkDatabaseAtStart(appSql, 'production', logger)).resolves.toBeUndefined();
    } finally {
      await appSql.end();
    }
    const api = await spawnApiProcess(stack, { env: { DATABASE_URL: appUrl } });
    try {
      expect((await fetch(`${api.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await api.stop();
    }
  });

  it('refuses, outside development, to run without the owner or with one role for both', async () => {
    const refused = async (env: Record<string, string>) => {
      try {
        await migrate({ MIGRATION_DATABASE_URL: '', DATABASE_URL: '', ...env });
      } catch (error) {
        const { code, stderr } = error as { code: number; stderr: string };
        return { code, stderr };
      }
      throw new Error('the migrate command did not refuse');
    };
    const withoutOwner = await refused({ NODE_ENV: 'production', DATABASE_URL: appUrl });
    expect(withoutOwner.code).toBe(78);
    expect(withoutOwner.stderr).toContain('MIGRATION_DATABASE_URL: required outside development');
    const oneRole = await refused({
      NODE_ENV: 'production',
      MIGRATION_DATABASE_URL: ownerUrl,
      DATABASE_URL: ownerUrl,
    });
    expect(oneRole.code).toBe(78);
    expect(oneRole.stderr).toContain('name the same role');
  });
});
