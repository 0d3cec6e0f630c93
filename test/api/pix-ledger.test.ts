import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { reconcileLedger } from '../../src/db/queries/ledger.js';
import { matchReceivedPix } from '../../src/db/queries/charges.js';
import { postUnpostedReceipts } from '../../src/db/queries/receipts.js';
import { charges, loans, receivedPix } from '../../src/db/schema/index.js';
import type { chargeSchema } from '../../src/http/routes/charges/schema.js';
import type { loanTransactionSchema } from '../../src/http/routes/loans/schema.js';
import { activeLoan, type LoanBody } from '../helpers/credit.js';
import { eventually } from '../helpers/eventually.js';
import { moneyDesk } from '../helpers/operators.js';
import { client, createPartner, json, tokenFor, type Client } from '../helpers/partners.js';
import { endToEndId, notifyPsp, valor } from '../helpers/psp.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

type ChargeBody = z.infer<typeof chargeSchema>;
type Transaction = z.infer<typeof loanTransactionSchema>;
interface AccountRow {
  account: string;
  debits: number;
  credits: number;
  balance: number;
}

let stack: TestStack;
let production: Client;
let sandbox: Client;

beforeAll(async () => {
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '60d' },
  });
  const partner = await createPartner(stack);
  production = client(stack, await tokenFor(stack, partner.credentials.production));
  sandbox = client(stack, await tokenFor(stack, partner.credentials.sandbox));
});
afterAll(async () => {
  await stack?.stop();
});

/** The PSP tells of one Pix, signed the way the contract says. */
const notify = (pix: { endToEndId: string; txid?: string; valor: string; horario: Date }) =>
  notifyPsp(
    stack.baseUrl,
    JSON.stringify({ pix: [{ ...pix, horario: pix.horario.toISOString() }] }),
  );

const opsGet = <T>(path: string) =>
  json<T>(
    fetch(`${stack.baseUrl}/ops/v1${path}`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } }),
  );

/** Production's accounts in today's trial balance. */
const productionAccounts = async () =>
  new Map(
    (
      await opsGet<{ production: { accounts: AccountRow[] } }>('/ledger/trial-balance')
    ).production.accounts.map((row) => [row.account, row]),
  );

const transactionsOf = async (loanId: string) =>
  (await json<{ data: Transaction[] }>(production(`/v3/loans/${loanId}/transactions?limit=100`)))
    .data;

describe('money no loan claims (contract §14)', () => {
  it('an unmatched Pix is in the ledger from its arrival: unidentified_receipts, whatever its amount', async () => {
    const before = await productionAccounts();
    // The largest amount the Pix scheme allows (ten digits of reais): it was a 422, never stored.
    const largest = endToEndId();
    expect(
      await json(notify({ endToEndId: largest, valor: '9999999999.99', horario: new Date() })),
    ).toEqual({ stored: 1, already_stored: 0 });
    const small = endToEndId();
    await json(notify({ endToEndId: small, valor: '12.34', horario: new Date() }));
    const listed = await opsGet<{ data: { end_to_end_id: string; amount: number }[] }>(
      '/unmatched-pix?limit=100',
    );
    expect(listed.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ end_to_end_id: largest, amount: 999_999_999_999 }),
        expect.objectContaining({ end_to_end_id: small, amount: 1_234 }),
      ]),
    );
    // The cash is in (collections_clearing) and owed to nobody yet (unidentified_receipts).
    const after = await productionAccounts();
    const moved = (account: string, side: 'debits' | 'credits') =>
      (after.get(account)?.[side] ?? 0) - (before.get(account)?.[side] ?? 0);
    expect(moved('collections_clearing', 'debits')).toBeGreaterThanOrEqual(999_999_999_999 + 1_234);
    expect(moved('unidentified_receipts', 'credits')).toBeGreaterThanOrEqual(
      999_999_999_999 + 1_234,
    );
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('one stored unposted (by an API of the release before, during a deploy) is posted by the worker’s sweep', async () => {
    // In a transaction of its own, rolled back: the other files' checks never see the gap.
    const rolledBack = new Error('rolled back');
    const checked = stack.database.db.transaction(async (tx) => {
      await tx.insert(receivedPix).values({
        endToEndId: endToEndId(),
        source: 'psp',
        status: 'unmatched',
        amount: 5_000,
        paidAt: new Date(),
      });
      expect((await reconcileLedger(tx)).map((finding) => finding.check)).toContain(
        'unidentified_matches_unmatched_pix',
      );
      expect(await postUnpostedReceipts(tx)).toBe(1);
      expect(await postUnpostedReceipts(tx)).toBe(0);
      expect(await reconcileLedger(tx)).toEqual([]);
      throw rolledBack;
    });
    await expect(checked).rejects.toBe(rolledBack);
  });
});

describe('a Pix on a production loan', () => {
  let loan: LoanBody;
  let desk: Awaited<ReturnType<typeof moneyDesk>>;
  beforeAll(async () => {
    loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    desk = await moneyDesk(stack);
  });

  const chargeFor = (body: Record<string, unknown>) =>
    json<ChargeBody>(production(`/v3/loans/${loan.id}/charges`, { method: 'POST', body }), 201);
  const withdrawalCharge = () =>
    json<ChargeBody>(production(`/v3/loans/${loan.id}/withdrawal`, { method: 'POST' }), 201);
  /** Waits for the Pix's booking on the loan (the first transaction of `type` it makes). */
  const booked = (reference: string, type: string, amount: number) =>
    eventually(async () => {
      const all = await transactionsOf(loan.id);
      return all.find((t) => t.reference === reference && t.type === type && t.amount === amount);
    }, `the ${type} of ${reference}`);
  /** As if the window's end had come: the charge expired at `at` (its timer's write). */
  const expireAt = (chargeId: string, at: Date) =>
    stack.database.db
      .update(charges)
      .set({ status: 'expired', expiresAt: at })
      .where(eq(charges.id, chargeId));

  it('is booked though an ops payment took its end-to-end id as reference: references are per source', async () => {
    const shared = endToEndId();
    const byOps = await desk(`/loans/${loan.id}/payments`, { amount: 1_000, reference: shared });
    expect(byOps.status).toBe(200);
    const next = await chargeFor({ scope: 'amount', amount: 2_000 });
    await json(
      notify({ endToEndId: shared, txid: next.txid, valor: valor(2_000), horario: new Date() }),
    );
    // It used to be skipped as a repeat of the ops payment: money received, never booked.
    await booked(shared, 'payment', 2_000);
    const same = (await transactionsOf(loan.id)).filter((t) => t.reference === shared);
    expect(same.map((t) => t.amount).sort()).toEqual([1_000, 2_000]);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('unmatched, then matched to its loan by two operators: booked there, drawing on unidentified_receipts', async () => {
    const id = endToEndId();
    await json(notify({ endToEndId: id, valor: valor(12_000), horario: new Date() }));
    // Refused when asked: nothing is held for approval.
    const sandboxLoan = await activeLoan(stack, sandbox, { opsToken: OPS_TOKEN });
    const toSandbox = await desk(`/unmatched-pix/${id}/match`, { loan_id: sandboxLoan.id });
    expect(toSandbox.status).toBe(422);
    expect(((await toSandbox.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe(
      'not_a_production_loan',
    );
    expect((await desk(`/unmatched-pix/${endToEndId()}/match`, { loan_id: loan.id })).status).toBe(
      404,
    );
    expect((await desk(`/unmatched-pix/${id}/match`, { loan: loan.id })).status).toBe(422);

    // Between the match's commit and its booking (the `pix/{e2e}` workflow, moments later) the
    // money is still in unidentified_receipts, and the ledger's check counts it there: a match
    // held in a transaction that is rolled back shows that moment.
    await stack.database.db
      .transaction(async (tx) => {
        const [owner] = await tx
          .select({ partnerId: loans.partnerId })
          .from(loans)
          .where(eq(loans.id, loan.id));
        await matchReceivedPix(tx, id, {
          loanId: loan.id,
          partnerId: owner!.partnerId,
          environment: 'production',
          matchedBy: null,
          matchApprovedBy: null,
        });
        const findings = await reconcileLedger(tx);
        expect(findings.filter((f) => f.check === 'unidentified_matches_unmatched_pix')).toEqual(
          [],
        );
        tx.rollback();
      })
      .catch((error: unknown) => {
        if (!String(error).includes('Rollback')) throw error;
      });

    const matched = await desk(`/unmatched-pix/${id}/match`, { loan_id: loan.id });
    expect(matched.status).toBe(200);
    const recorded = await eventually(async () => {
      const pix = await opsGet<{ status: string; loan_id: string; transaction_id: string }>(
        `/received-pix/${id}`,
      );
      return pix.status === 'recorded' ? pix : undefined;
    }, 'the matched Pix booked');
    expect(recorded.loan_id).toBe(loan.id);
    const booking = (await transactionsOf(loan.id)).find((t) => t.id === recorded.transaction_id)!;
    expect(booking).toMatchObject({ type: 'payment', amount: 12_000, reference: id });
    expect(booking.entries).toContainEqual({
      account: 'unidentified_receipts',
      direction: 'debit',
      amount: 12_000,
    });
    const waiting = await opsGet<{ data: { end_to_end_id: string }[] }>('/unmatched-pix?limit=100');
    expect(waiting.data.map((pix) => pix.end_to_end_id)).not.toContain(id);
    // Once booked, it is no one's to match or return again.
    expect((await desk(`/unmatched-pix/${id}/match`, { loan_id: loan.id })).status).toBe(409);
    expect((await desk(`/unmatched-pix/${id}/return`, { reference: 'D-1' })).status).toBe(409);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('unmatched, then returned to its payer by two operators: owed back and sent', async () => {
    const id = endToEndId();
    await json(notify({ endToEndId: id, valor: valor(3_456), horario: new Date() }));
    const before = await productionAccounts();
    expect((await desk(`/unmatched-pix/${id}/return`, { reference: '' })).status).toBe(422);
    expect((await desk(`/unmatched-pix/${id}/return`, { reference: `D-${id}` })).status).toBe(200);
    expect(await opsGet<{ status: string }>(`/received-pix/${id}`)).toMatchObject({
      status: 'returned',
      loan_id: null,
    });
    const after = await productionAccounts();
    const moved = (account: string, side: 'debits' | 'credits') =>
      (after.get(account)?.[side] ?? 0) - (before.get(account)?.[side] ?? 0);
    expect(moved('unidentified_receipts', 'debits')).toBeGreaterThanOrEqual(3_456);
    expect(moved('disbursement_clearing', 'credits')).toBeGreaterThanOrEqual(3_456);
    expect((await desk(`/unmatched-pix/${id}/return`, { reference: `D-${id}` })).status).toBe(409);
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('on a withdrawal charge after the window is a payment; the expired charge stays expired', async () => {
    const first = await withdrawalCharge();
    await expireAt(first.id, new Date(Date.now() - 60_000));
    const late = endToEndId();
    await json(
      notify({
        endToEndId: late,
        txid: first.txid,
        valor: valor(first.amount),
        horario: new Date(),
      }),
    );
    // The review's case: this cancelled the loan as withdrawn, its IOF reversed, the charge paid.
    await booked(late, 'payment', first.amount);
    expect((await json<LoanBody>(production(`/v3/loans/${loan.id}`))).status).toBe('active');
    expect((await json<ChargeBody>(production(`/v3/charges/${first.id}`))).status).toBe('expired');
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });

  it('paid in time but told after the charge expired, it withdraws: the right was used in time', async () => {
    // A loan of its own: the one above was all but paid by the late Pix.
    loan = await activeLoan(stack, production, { opsToken: OPS_TOKEN, production: true });
    const second = await withdrawalCharge();
    const expiry = new Date(Date.now() - 60_000);
    await expireAt(second.id, expiry);
    const inTime = endToEndId();
    await json(
      notify({
        endToEndId: inTime,
        txid: second.txid,
        valor: valor(second.amount),
        horario: new Date(expiry.getTime() - 60_000),
      }),
    );
    await booked(inTime, 'withdrawal', second.amount);
    expect(await json<LoanBody>(production(`/v3/loans/${loan.id}`))).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'withdrawal',
    });
    expect((await json<ChargeBody>(production(`/v3/charges/${second.id}`))).status).toBe('paid');
    expect(await reconcileLedger(stack.database.db)).toEqual([]);
  });
});
