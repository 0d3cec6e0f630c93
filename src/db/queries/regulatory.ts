/**
 * The production book as it stood at the end of a month, for the SCR 3040 (contract §19). The one
 * reader across every partner: the lender reports all it lent, whoever the partner; it takes the
 * environment as a parameter the type fixes to production, so no sandbox loan can reach it.
 */
import { and, eq, inArray, isNotNull, lt, max } from 'drizzle-orm';
import { addDays, businessDate, startOfBusinessDate } from '../../domain/business-date.js';
import { owedRowsOn, type BookedPayment } from '../../domain/regulatory/month-end.js';
import type { Assignment, ClientSnapshot, LoanSnapshot } from '../../domain/regulatory/scr3040.js';
import type { DbOrTx } from '../client.js';
import { customers, loanSigners, loans, loanTransactions } from '../schema/index.js';

/** Transactions that end a loan's debt other than by payment: its money went back. */
const undoing = ['withdrawal', 'payout_returned'] as const;

/**
 * Each borrower (one per CPF, or per CNPJ for a company, whichever partner brought them) with its
 * production loans disbursed by the end of `monthEnd` (São Paulo) and still owing that day, each
 * rebuilt from the payments booked by then (`month-end.ts`).
 */
export async function productionBookAt(
  db: DbOrTx,
  environment: 'production',
  monthEnd: string,
): Promise<ClientSnapshot[]> {
  const cutoff = new Date(startOfBusinessDate(addDays(monthEnd, 1)));
  const rows = await db
    .select({ loan: loans, customer: customers })
    .from(loans)
    .innerJoin(customers, eq(customers.id, loans.customerId))
    .where(
      and(
        eq(loans.environment, environment),
        isNotNull(loans.disbursedAt),
        lt(loans.disbursedAt, cutoff),
      ),
    );
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.loan.id);
  const [transactions, signatures] = await Promise.all([
    db
      .select()
      .from(loanTransactions)
      .where(and(inArray(loanTransactions.loanId, ids), lt(loanTransactions.occurredAt, cutoff)))
      .orderBy(loanTransactions.occurredAt, loanTransactions.createdAt),
    db
      .select({ loanId: loanSigners.loanId, signedAt: max(loanSigners.signedAt) })
      .from(loanSigners)
      .where(inArray(loanSigners.loanId, ids))
      .groupBy(loanSigners.loanId),
  ]);
  const signedOn = new Map(signatures.map((row) => [row.loanId, row.signedAt]));
  const byLoan = new Map<string, (typeof transactions)[number][]>();
  for (const row of transactions) byLoan.set(row.loanId, [...(byLoan.get(row.loanId) ?? []), row]);

  const clients = new Map<string, ClientSnapshot & { loans: LoanSnapshot[] }>();
  for (const { loan, customer } of rows) {
    const booked = byLoan.get(loan.id) ?? [];
    if (booked.some((row) => (undoing as readonly string[]).includes(row.type))) continue;
    // A refinancing pays the old loan off inside the book (contract §17): it leaves the book then.
    const payments: BookedPayment[] = booked
      .filter(
        (row) => row.type === 'payment' || row.type === 'payoff' || row.type === 'refinancing',
      )
      .map((row) => ({
        date: businessDate(row.occurredAt),
        type: row.type === 'payment' ? 'payment' : 'payoff',
        parts: row.allocation,
        installmentNumber: row.installmentNumber,
        principal: row.principalAmount,
      }));
    const owed = rebuilt(loan.id, () =>
      owedRowsOn(
        {
          schedule: loan.figures.schedule,
          principalAmount: loan.figures.principal_amount,
          terms: {
            monthlyRate: String(loan.figures.monthly_interest_rate),
            lateCharges: loan.lateChargeRates,
          },
          payments,
        },
        monthEnd,
      ),
    );
    if (owed.length === 0) continue;
    const writtenOff = loan.writtenOffAt && loan.writtenOffAt < cutoff ? loan.writtenOffAt : null;
    const company = customer.cnpj !== null;
    const key = company ? `cnpj:${customer.cnpj}` : `cpf:${customer.cpf}`;
    const since = businessDate(customer.createdAt);
    const client = clients.get(key) ?? {
      type: company ? ('company' as const) : ('person' as const),
      cpf: customer.cpf,
      cnpj: customer.cnpj,
      relationshipSince: since,
      // The service keeps no borrower's address (contract §5): no Localiz, no CEP.
      location: null,
      cep: null,
      loans: [],
    };
    if (since < client.relationshipSince) client.relationshipSince = since;
    client.loans.push({
      loanId: loan.id,
      contractDate: businessDate(signedOn.get(loan.id) ?? loan.createdAt),
      lastDueDate: loan.figures.schedule.at(-1)!.due_date,
      annualRate: loan.figures.annual_interest_rate,
      rows: owed,
      writtenOffOn: writtenOff ? businessDate(writtenOff) : null,
      assignment: soldBy(loan, cutoff),
    });
    clients.set(key, client);
  }
  return [...clients.values()];
}

/**
 * A loan sold by the month's end (contract §19, docs/assignments.md): without coobrigação — the
 * ledger derecognizes it, so the lender kept no substantial risk — it is reported in the month of
 * the sale with its `Inf` and leaves the file after (`natureOf`). The buyer's kind only matters
 * with retention, which the service does not sell with.
 */
function soldBy(
  loan: { assignedAt: Date | null; assignedTo: { cnpj: string } | null },
  cutoff: Date,
): Assignment | undefined {
  if (!loan.assignedAt || !loan.assignedTo || loan.assignedAt >= cutoff) return undefined;
  return {
    assigneeCnpj: loan.assignedTo.cnpj,
    assignee: 'other',
    retainsRisk: false,
    coobligationPercent: 0,
    date: businessDate(loan.assignedAt),
  };
}

/**
 * A loan the rebuild cannot read (a payment's parts naming a row its schedule lacks) stops the
 * export naming it: a month's file is never sent with a loan silently left out.
 */
function rebuilt<T>(loanId: string, rebuild: () => T): T {
  try {
    return rebuild();
  } catch (error) {
    throw new Error(`SCR 3040: loan ${loanId} cannot be rebuilt at the month's end`, {
      cause: error,
    });
  }
}
