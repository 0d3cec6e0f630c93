import { describe, expect, it } from 'vitest';
import {
  clearingDiscrepancies,
  movementDiscrepancies,
  pixDiscrepancies,
} from '../../src/domain/reconciliation/discrepancies.js';
import { statusOf, totalOf } from '../../src/domain/reconciliation/report.js';
import { dayWindow } from '../../src/reconciliation/reconcile-day.js';

const stored = (
  id: string,
  amount: number,
  extra: Partial<{ reconciliationDate: string; clearingDebit: number | null }> = {},
) => ({
  id,
  amount,
  reconciliationDate: null,
  clearingDebit: amount,
  ...extra,
});

describe('the reconciliation’s comparison (contract §16)', () => {
  it('names each Pix discrepancy once, and says what the run did', () => {
    const found = pixDiscrepancies(
      '2026-11-27',
      [
        { id: 'same', amount: 100 },
        { id: 'found', amount: 200 },
        { id: 'other', amount: 300 },
        { id: 'still-missing', amount: 400 },
      ],
      [
        stored('same', 100),
        stored('found', 200, { reconciliationDate: '2026-11-27' }),
        stored('other', 350),
        stored('unknown', 50),
        stored('late', 60, { clearingDebit: null }),
        // Stored by another date's run: no discrepancy of this one.
        stored('earlier', 70, { reconciliationDate: '2026-11-26' }),
      ],
    );
    expect(found).toEqual([
      {
        kind: 'missing_notification',
        endToEndId: 'found',
        reference: null,
        pspAmount: 200,
        bookedAmount: 200,
        action: 'booked_missing_notification',
      },
      {
        kind: 'missing_notification',
        endToEndId: 'still-missing',
        reference: null,
        pspAmount: 400,
        bookedAmount: null,
        action: 'none',
      },
      {
        kind: 'unknown_to_psp',
        endToEndId: 'unknown',
        reference: null,
        pspAmount: null,
        bookedAmount: 50,
        action: 'none',
      },
      {
        kind: 'unknown_to_psp',
        endToEndId: 'late',
        reference: null,
        pspAmount: null,
        bookedAmount: 60,
        action: 'none',
      },
      {
        kind: 'unknown_to_psp',
        endToEndId: 'earlier',
        reference: null,
        pspAmount: null,
        bookedAmount: 70,
        action: 'none',
      },
      {
        kind: 'amount_mismatch',
        endToEndId: 'other',
        reference: null,
        pspAmount: 300,
        bookedAmount: 350,
        action: 'none',
      },
      {
        kind: 'not_booked',
        endToEndId: 'late',
        reference: null,
        pspAmount: null,
        bookedAmount: null,
        action: 'none',
      },
    ]);
    expect(statusOf(found)).toBe('discrepancies');
    expect(statusOf(found.filter((d) => d.action !== 'none'))).toBe('matched');
    expect(statusOf([])).toBe('matched');
  });

  it('compares devolucoes and payouts by id, and the clearing account with the PSP’s total', () => {
    const kinds = {
      notBooked: 'devolucao_not_booked',
      unknownToPsp: 'devolucao_unknown_to_psp',
      amountMismatch: 'devolucao_amount_mismatch',
    } as const;
    expect(
      movementDiscrepancies(
        kinds,
        [
          { id: 'd1', endToEndId: 'e1', amount: 10 },
          { id: 'd2', endToEndId: 'e2', amount: 20 },
        ],
        [
          { id: 'd2', endToEndId: 'e2', amount: 25 },
          { id: 'd3', endToEndId: 'e3', amount: 30 },
        ],
      ).map((d) => [d.kind, d.reference, d.pspAmount, d.bookedAmount]),
    ).toEqual([
      ['devolucao_not_booked', 'd1', 10, null],
      ['devolucao_unknown_to_psp', 'd3', null, 30],
      ['devolucao_amount_mismatch', 'd2', 20, 25],
    ]);
    const total = totalOf([{ amount: 10 }, { amount: 32 }]);
    expect(total).toEqual({ count: 2, amount: 42 });
    expect(clearingDiscrepancies(total, 42)).toEqual([]);
    expect(clearingDiscrepancies(total, 41)).toEqual([
      expect.objectContaining({ kind: 'clearing_mismatch', pspAmount: 42, bookedAmount: 41 }),
    ]);
  });

  it('takes a business day from midnight to midnight in São Paulo', () => {
    expect(dayWindow('2026-11-27')).toEqual({
      from: new Date('2026-11-27T03:00:00.000Z'),
      to: new Date('2026-11-28T03:00:00.000Z'),
    });
    // Under the old summer time (2018-11-04 began at 01:00 local, UTC−2).
    expect(dayWindow('2018-11-04').from).toEqual(new Date('2018-11-04T03:00:00.000Z'));
  });
});
