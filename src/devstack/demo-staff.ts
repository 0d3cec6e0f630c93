import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createDatabase } from '../db/client.js';
import { findOperator, insertOperator, issueOperatorToken } from '../db/queries/operators.js';
import { newId } from '../domain/ids.js';
import { breakGlass, type OperatorRole } from '../domain/operators.js';

/** One member of the demo staff: who, with which roles, and their bearer token. */
export interface DemoOperator {
  id: string;
  name: string;
  email: string;
  roles: OperatorRole[];
  token: string;
}

/**
 * The staff `npm run dev` gives its database once, so the production walkthrough
 * (docs/walkthrough-production-psp.md) and the back office have people to act as: two
 * administrators (one asks, the other approves), a KYC reviewer, and a maker and a checker for
 * money moved by hand (each `payments` and `disbursement`: dual control needs two). Development
 * only: a production database gets its first administrators from the break-glass token and
 * everyone else through them (README, "Operators and the ops listener").
 */
const demoStaff: { key: string; name: string; roles: OperatorRole[] }[] = [
  { key: 'admin', name: 'Ana Admin', roles: ['admin'] },
  { key: 'second_admin', name: 'Bruno Admin', roles: ['admin'] },
  { key: 'reviewer', name: 'Carla Revisora', roles: ['kyc_reviewer', 'workflow_viewer'] },
  { key: 'maker', name: 'Davi Tesouraria', roles: ['payments', 'disbursement'] },
  { key: 'checker', name: 'Elisa Tesouraria', roles: ['payments', 'disbursement'] },
];

export type DemoStaff = Record<string, DemoOperator>;

/**
 * The demo staff of `file` (`.data/demo-staff.json`) while they still exist in the database, or
 * seeded now through the service's own queries and written there (mode 600).
 */
export async function ensureDemoStaff(databaseUrl: string, file: string): Promise<DemoStaff> {
  const database = createDatabase(databaseUrl, { max: 1 });
  try {
    if (existsSync(file)) {
      const saved = JSON.parse(await readFile(file, 'utf8')) as DemoStaff;
      const present = await Promise.all(
        Object.values(saved).map((member) => findOperator(database.db, member.id)),
      );
      if (
        present.length === demoStaff.length &&
        present.every((operator) => operator && operator.deactivatedAt === null)
      )
        return saved;
    }
    const seeded = await database.db.transaction(async (tx) => {
      const staff: DemoStaff = {};
      for (const member of demoStaff) {
        const email = `${member.key.replace('_', '-')}-${newId('op').slice(3, 9)}@lender.example`;
        const operator = await insertOperator(tx, {
          id: newId('op'),
          name: member.name,
          email,
          roles: member.roles,
          createdBy: breakGlass.actor,
        });
        if (!operator) throw new Error(`seeding ${member.name}: the e-mail is taken`);
        staff[member.key] = {
          id: operator.id,
          name: member.name,
          email,
          roles: member.roles,
          token: await issueOperatorToken(tx, operator.id),
        };
      }
      return staff;
    });
    await writeFile(file, JSON.stringify(seeded, null, 2), { mode: 0o600 });
    return seeded;
  } finally {
    await database.close();
  }
}
