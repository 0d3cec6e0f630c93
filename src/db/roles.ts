import type postgres from 'postgres';

/**
 * Two database roles: the owner, which the migrate command connects as and which owns every table,
 * and the application's role, which the API and the worker connect as: it reads and writes rows
 * and can create, alter or drop nothing. The embedded PostgreSQL of `npm run dev`,
 * `npm run dev:cluster` and the tests gets both at start (its superuser owns the tables).
 */
export const DEVELOPMENT_APP_ROLE = 'embedded_credit_app';
/** Development and tests only: a loopback server's role, like its superuser's `postgres`. */
const DEVELOPMENT_APP_PASSWORD = 'embedded-credit-app-dev';

/** The owner's URL with the development application role in its place: the same server and database. */
export function developmentAppUrl(ownerUrl: string): string {
  const url = new URL(ownerUrl);
  url.username = DEVELOPMENT_APP_ROLE;
  url.password = DEVELOPMENT_APP_PASSWORD;
  return url.toString();
}

export function roleOf(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).username);
}

export interface ApplicationRoleGrant {
  role: string;
  /** The role did not exist and the migrate command created it (with the URL's password). */
  created: boolean;
}

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * Creates the application's role when it is missing (LOGIN, the password of its URL; the owner
 * needs CREATEROLE, else the error names the SQL to run by hand) and grants it, on the connection
 * of the owner: row access to every table and sequence in `public`, the same on whatever later
 * migrations create (`ALTER DEFAULT PRIVILEGES` for the owner), and a read of the migration table
 * so the API can check it is current. Never ownership, never CREATE: a table can be neither made,
 * altered nor dropped with it. The ledger's entries and the audit trail are append-only for it as
 * well, and approvals are never deleted (triggers refuse these anyway). Idempotent: the migrate command runs it every time.
 */
export async function grantApplicationRole(
  sql: postgres.Sql,
  appUrl: string,
): Promise<ApplicationRoleGrant> {
  const role = roleOf(appUrl);
  const password = decodeURIComponent(new URL(appUrl).password);
  const [{ owner, database, existing }] = await sql<
    [{ owner: string; database: string; existing: boolean }]
  >`select current_user as owner, current_database() as database,
      exists (select 1 from pg_roles where rolname = ${role}) as existing`;
  let created = false;
  if (!existing) {
    if (!password)
      throw new Error(
        `The role ${role} (DATABASE_URL) does not exist and its URL has no password to create it with.`,
      );
    try {
      await sql.unsafe(`create role ${identifier(role)} login password ${literal(password)}`);
      created = true;
    } catch (error) {
      if ((error as { code?: unknown }).code !== '42501') throw error;
      throw new Error(
        `The role ${role} (DATABASE_URL) does not exist and ${owner} may not create roles. ` +
          `As an administrator, run: create role ${identifier(role)} login password '…'; then run the migrate command again (it grants the rest).`,
        { cause: error },
      );
    }
  }
  const r = identifier(role);
  await sql.begin(async (tx) => {
    for (const statement of [
      `grant connect on database ${identifier(database)} to ${r}`,
      // PostgreSQL 15 and later already refuse PUBLIC's CREATE here; older servers did not.
      `revoke create on schema public from public`,
      `grant usage on schema public to ${r}`,
      `grant select, insert, update, delete on all tables in schema public to ${r}`,
      `grant usage, select on all sequences in schema public to ${r}`,
      `revoke update, delete, truncate on ledger_entries from ${r}`,
      // The audit trail is append-only for it, and an approval is never deleted (a trigger
      // refuses these to every role, and the change of a decided approval too).
      `revoke update, delete, truncate on ops_audit, ops_audit_outcomes from ${r}`,
      `revoke delete, truncate on approvals from ${r}`,
      `alter default privileges in schema public grant select, insert, update, delete on tables to ${r}`,
      `alter default privileges in schema public grant usage, select on sequences to ${r}`,
      `grant usage on schema drizzle to ${r}`,
      `grant select on drizzle.__drizzle_migrations to ${r}`,
    ])
      await tx.unsafe(statement);
  });
  return { role, created };
}

/**
 * What the connected role could do beyond rows: the API and the worker refuse to start with
 * such a role outside development (a leaked connection would reshape the schema).
 */
export async function excessPrivileges(sql: postgres.Sql): Promise<string[]> {
  const [row] = await sql<[{ role: string; superuser: boolean; create: boolean; owns: boolean }]>`
    select current_user as role,
      (select rolsuper from pg_roles where rolname = current_user) as superuser,
      has_schema_privilege('public', 'CREATE') as create,
      exists (
        select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind in ('r', 'p') and pg_has_role(c.relowner, 'USAGE')
      ) as owns`;
  return [
    ...(row.superuser ? [`${row.role} is a superuser`] : []),
    ...(row.create ? [`${row.role} may create tables in schema public`] : []),
    ...(row.owns && !row.superuser ? [`${row.role} owns tables (it may alter or drop them)`] : []),
  ];
}
