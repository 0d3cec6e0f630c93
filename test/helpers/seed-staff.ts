import { createDatabase } from '../../src/db/client.js';
import { insertOperator, issueOperatorToken } from '../../src/db/queries/operators.js';
import { newId } from '../../src/domain/ids.js';
import { breakGlass, type OperatorRole } from '../../src/domain/operators.js';

/** An operator as tests hold one: its record as the API presents it, and its token. */
export interface TestOperator {
  operator: { id: string; roles: string[]; status: string; created_by: string };
  token: string;
}

/**
 * The staff every test file of a run (or a bench) shares: the two administrators the break-glass
 * token would start (an administrator asks, the other approves: `createOperator` in
 * operators.ts), and a money desk that checks what tests move by hand (`moneyDesk`).
 */
export interface SeededStaff {
  admins: [TestOperator, TestOperator];
  desk: TestOperator;
}

/**
 * Seeds that staff into a freshly migrated database through the service's own queries, once per
 * run (the global setup) or per bench stack: the run's test files share one database, where the
 * break-glass token can start two administrators only once, so no file could start its own.
 * How the first administrators really come to be, and every staff change after, is tested
 * through the API in test/api/operators.test.ts.
 */
export async function seedStaff(databaseUrl: string): Promise<SeededStaff> {
  const database = createDatabase(databaseUrl, { max: 1 });
  try {
    return await database.db.transaction(async (tx) => {
      const seed = async (
        name: string,
        roles: OperatorRole[],
        createdBy: string,
      ): Promise<TestOperator> => {
        const operator = await insertOperator(tx, {
          id: newId('op'),
          name,
          email: `${name.toLowerCase().replaceAll(' ', '-')}-${newId('op').slice(3, 11)}@lender.example`,
          roles,
          createdBy: { type: 'operator', id: createdBy },
        });
        if (!operator) throw new Error(`seeding ${name}: the e-mail is taken`);
        return {
          operator: {
            id: operator.id,
            roles: operator.roles,
            status: 'active',
            created_by: operator.createdBy,
          },
          token: await issueOperatorToken(tx, operator.id),
        };
      };
      const first = await seed('First admin', ['admin'], breakGlass.actor.id);
      const second = await seed('Second admin', ['admin'], breakGlass.actor.id);
      const desk = await seed('Money desk', ['payments', 'disbursement'], first.operator.id);
      return { admins: [first, second], desk };
    });
  } finally {
    await database.close();
  }
}
