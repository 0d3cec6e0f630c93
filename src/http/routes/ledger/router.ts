import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { loanNotFound } from '../../../commands/loan-deps.js';
import { loanAccountBalances, trialBalance } from '../../../db/queries/ledger.js';
import { findLoanForOps } from '../../../db/queries/loans.js';
import { businessDate } from '../../../domain/business-date.js';
import { ledgerAccounts } from '../../../domain/ledger/postings.js';
import { loanParams } from '../loans/schema.js';
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

const totals = <T extends { debits: number; credits: number }>(accounts: T[]) => ({
  accounts,
  debits: accounts.reduce((sum, row) => sum + row.debits, 0),
  credits: accounts.reduce((sum, row) => sum + row.credits, 0),
});

const loanLedgerSchema = z
  .object({
    loan_id: z.string(),
    accounts: z.array(accountBalance),
    debits: centavos('Σ debits over the loan’s accounts.'),
    credits: centavos('Σ credits over the loan’s accounts: always equal to the debits.'),
  })
  .meta({ id: 'LoanLedger' });

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

/**
 * `GET /ops/v1/ledger/trial-balance`: every account of every loan, production and sandbox apart;
 * `GET /ops/v1/loans/{id}/ledger`: one loan's accounts.
 */
export function ledgerRoutes(api: ApiRouter, deps: { db: Db; clock: () => Date }): void {
  api.add(
    {
      method: 'get',
      path: '/ledger/trial-balance',
      operationId: 'getTrialBalance',
      summary: 'The trial balance of a day',
      description:
        'Each ledger account’s debits, credits and balance over every loan and the money no loan claims yet (`unidentified_receipts`: Pix that matched no charge), for the entries that occurred up to the end of `date` (São Paulo), production and sandbox apart (contract §13). Debits always equal credits.',
      tag: 'Ledger',
      security: 'ops',
      query: trialBalanceQuery,
      responses: { 200: { description: 'The trial balance.', schema: trialBalanceSchema } },
      errors: [],
    },
    async (ctx, { query }) => {
      const date = query.date ?? businessDate(deps.clock());
      const [production, sandbox] = await Promise.all(
        (['production', 'sandbox'] as const).map(async (environment) =>
          totals(await trialBalance(deps.db, environment, date)),
        ),
      );
      ctx.body = { date, production: production!, sandbox: sandbox! };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/ledger',
      operationId: 'getLoanLedger',
      summary: 'A loan’s ledger accounts',
      description:
        'Each ledger account’s debits, credits and balance over one loan’s entries (contract §13): `loan_principal` is the principal its rows still owe; empty before the disbursement.',
      tag: 'Ledger',
      security: 'ops',
      params: loanParams,
      responses: { 200: { description: 'The loan’s accounts.', schema: loanLedgerSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const accounts = await loanAccountBalances(deps.db, params.loan_id);
      // No entries: a loan not yet disbursed, or no loan at all.
      if (accounts.length === 0 && !(await findLoanForOps(deps.db, params.loan_id)))
        throw loanNotFound(params.loan_id);
      ctx.body = { loan_id: params.loan_id, ...totals(accounts) };
    },
  );
}
