import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { trialBalance } from '../../../db/queries/ledger.js';
import { businessDate } from '../../../domain/business-date.js';
import { ledgerAccounts } from '../../../domain/ledger/postings.js';
import type { ApiRouter } from '../../api-router.js';

const centavos = (description: string) => z.int().meta({ description });

const accountBalance = z.object({
  account: z.enum(ledgerAccounts),
  debits: centavos('Σ debits, centavos.'),
  credits: centavos('Σ credits, centavos.'),
  balance: centavos('Debits − credits.'),
});

const environmentBalance = z.object({
  accounts: z.array(accountBalance),
  debits: centavos('Σ debits over every account.'),
  credits: centavos('Σ credits over every account: always equal to the debits.'),
});

const trialBalanceSchema = z
  .object({
    date: z.iso.date(),
    production: environmentBalance,
    sandbox: environmentBalance,
  })
  .meta({ id: 'TrialBalance' });

const trialBalanceQuery = z.strictObject({
  date: z.iso.date().optional().meta({
    description: 'Entries that occurred up to the end of this day (São Paulo); default today.',
  }),
});

/** `GET /ops/v1/ledger/trial-balance`: every account of every loan, production and sandbox apart. */
export function ledgerRoutes(api: ApiRouter, deps: { db: Db; clock: () => Date }): void {
  api.add(
    {
      method: 'get',
      path: '/ledger/trial-balance',
      operationId: 'getTrialBalance',
      summary: 'The trial balance of a day',
      description:
        'Each ledger account’s debits, credits and balance over every loan, for the entries that occurred up to the end of `date` (São Paulo), production and sandbox apart (contract §13). Debits always equal credits.',
      tag: 'Ledger',
      security: 'ops',
      query: trialBalanceQuery,
      responses: { 200: { description: 'The trial balance.', schema: trialBalanceSchema } },
      errors: [],
    },
    async (ctx, { query }) => {
      const date = query.date ?? businessDate(deps.clock());
      const [production, sandbox] = await Promise.all(
        (['production', 'sandbox'] as const).map(async (environment) => {
          const accounts = await trialBalance(deps.db, environment, date);
          return {
            accounts,
            debits: accounts.reduce((sum, row) => sum + row.debits, 0),
            credits: accounts.reduce((sum, row) => sum + row.credits, 0),
          };
        }),
      );
      ctx.body = { date, production: production!, sandbox: sandbox! };
    },
  );
}
