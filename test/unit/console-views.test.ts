import { describe, expect, it } from 'vitest';
import { agreementTable } from '../../src/http/routes/console/agreements.js';
import type { Agreement } from '../../src/db/queries/agreements.js';
import { maskPhone, percent } from '../../src/http/routes/console/customer.js';
import { erasureStatusName } from '../../src/http/routes/console/erasures.js';
import { reconciliationView } from '../../src/http/routes/console/reconciliation.js';
import { trialBalanceView } from '../../src/http/routes/console/trial-balance.js';
import type { Erasure } from '../../src/db/queries/erasure.js';
import type {
  ReconciliationReport,
  StoredDiscrepancy,
} from '../../src/db/queries/reconciliation.js';
import { presentReconciliation } from '../../src/presenters/reconciliation.js';

/** The text a reader sees (tags dropped, whitespace folded). */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe("the back office's views", () => {
  it('masks a phone to its last four digits', () => {
    expect(maskPhone('+55 (11) 98765-4321')).toBe('•••• 4321');
    expect(maskPhone('11987654321')).toBe('•••• 4321');
    expect(maskPhone('123')).toBe('••••');
  });

  it('shows a monthly rate as a percentage', () => {
    expect(percent('0.024900')).toBe('2,49 %');
    expect(percent('0.01')).toBe('1,00 %');
    expect(percent('0.123456')).toBe('12,35 %');
  });

  it('names where an erasure stands, as the ops API does', () => {
    const base = {
      customerId: 'cust_1',
      erasedAt: new Date('2026-11-01T12:00:00Z'),
      retainedUntil: new Date('2031-11-01T12:00:00Z'),
      filesDeletedAt: null,
      completedAt: null,
    } as unknown as Erasure;
    expect(erasureStatusName(base)).toMatch(/^apagando/);
    expect(erasureStatusName({ ...base, filesDeletedAt: new Date() })).toBe(
      'retido: contratos e razão guardados até 2031-11-01',
    );
    expect(
      erasureStatusName({ ...base, filesDeletedAt: new Date(), completedAt: new Date() }),
    ).toMatch(/^concluído/);
  });

  it('shows a reconciliation report with both sides and each discrepancy under its kind', () => {
    const report = {
      date: '2026-11-27',
      status: 'discrepancies',
      runs: 2,
      requestedAt: new Date('2026-11-28T03:30:00Z'),
      completedAt: new Date('2026-11-28T03:30:05Z'),
      failure: null,
      pspPixCount: 3,
      pspPixAmount: 123_456,
      bookedPixCount: 2,
      bookedPixAmount: 100_000,
      pspDevolucaoCount: 0,
      pspDevolucaoAmount: 0,
      bookedDevolucaoCount: 0,
      bookedDevolucaoAmount: 0,
      pspPayoutCount: null,
      pspPayoutAmount: null,
      bookedPayoutCount: null,
      bookedPayoutAmount: null,
      collectionsClearingDebits: 123_456,
      collectionsClearingPixDebits: 123_456,
      disbursementClearingCredits: 0,
    } as unknown as ReconciliationReport;
    const found = (kind: string, e2e: string, psp: number | null, booked: number | null) =>
      ({
        kind,
        endToEndId: e2e,
        reference: null,
        pspAmount: psp,
        bookedAmount: booked,
        action: kind === 'missing_notification' ? 'booked_missing_notification' : 'none',
      }) as unknown as StoredDiscrepancy;
    const shown = text(
      reconciliationView(
        presentReconciliation(report, [
          found('missing_notification', 'E1', 23_456, null),
          found('amount_mismatch', 'E2', 500, 400),
          found('amount_mismatch', 'E3', 700, 600),
        ]),
      ),
    );
    expect(shown).toContain('Pix recebidos 3 · R$ 1.234,56 2 · R$ 1.000,00');
    expect(shown).not.toContain('Payouts'); // not wired for this day: no row, no dashes
    expect(shown).toContain('Pix sem notificação (lançado pela conciliação) (1)');
    expect(shown).toContain('E1 — R$ 234,56 — lançou o Pix');
    expect(shown).toContain('Pix com valor diferente (2)');
    expect(shown).toContain('E3 — R$ 7,00 R$ 6,00 nada (ver à mão)');
    // Kinds with nothing found are left out.
    expect(shown).not.toContain('Devolução com valor diferente');

    const clean = text(
      reconciliationView(presentReconciliation({ ...report, status: 'matched' }, [])),
    );
    expect(clean).toContain('conferido, sem divergências');
    expect(clean).toContain('Nenhuma divergência.');
  });

  it('totals a trial balance and warns when debits and credits differ', () => {
    const balanced = text(
      trialBalanceView('Produção', [
        { account: 'loan_principal', debits: 100_000, credits: 20_000, balance: 80_000 },
        { account: 'disbursement_clearing', debits: 0, credits: 95_000, balance: -95_000 },
        { account: 'iof_payable', debits: 0, credits: 5_000, balance: -5_000 },
        { account: 'collections_clearing', debits: 20_000, credits: 0, balance: 20_000 },
      ]),
    );
    expect(balanced).toContain(
      'Principal a receber loan_principal R$ 1.000,00 R$ 200,00 R$ 800,00',
    );
    expect(balanced).toContain('Total R$ 1.200,00 R$ 1.200,00 R$ 0,00');
    expect(balanced).not.toContain('diferem');

    const off = text(
      trialBalanceView('Produção', [
        { account: 'loan_principal', debits: 100_000, credits: 0, balance: 100_000 },
        { account: 'disbursement_clearing', debits: 0, credits: 99_999, balance: -99_999 },
      ]),
    );
    expect(off).toContain('Débitos e créditos diferem em R$ 0,01');
    expect(text(trialBalanceView('Sandbox', []))).toBe('Nenhum lançamento até este dia.');
  });

  it("shows a loan's agreements with what was agreed and where each stands", () => {
    const agreement = {
      id: 'agr_1',
      status: 'lapsed',
      acceptanceDeadline: new Date('2026-03-27T02:59:59.999Z'),
      acceptedAt: new Date('2026-03-16T15:00:00Z'),
      endedAt: new Date('2026-03-27T02:59:59.999Z'),
      figures: {
        scope: 'overdue',
        rows: [{ number: 1 }, { number: 2 }],
        debt_amount: 71316,
        discount_amount: 2768,
        agreed_amount: 68548,
        installments: 4,
        first_due_date: '2026-03-26',
        schedule: [{ installment_amount: 17778 }],
      },
    } as unknown as Agreement;
    const shown = text(agreementTable([agreement]));
    expect(shown).toContain('agr_1 caducado vencidas: 1, 2 R$ 713,16 R$ 27,68 R$ 685,48');
    expect(shown).toContain('4 × R$ 177,78 de 2026-03-26');
    expect(shown).toContain('26/03/2026, 23:59:59');
    expect(text(agreementTable([]))).toBe('Nenhum acordo.');
  });
});
