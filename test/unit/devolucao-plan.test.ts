import { describe, expect, it } from 'vitest';
import {
  devolucaoId,
  planDevolucoes,
  refundIdFor,
  returnableAmount,
  type ReturnablePix,
} from '../../src/domain/loans/devolucoes.js';

const pix = (id: string, amount: number, minute: number, returned = 0): ReturnablePix => ({
  endToEndId: id,
  amount,
  paidAt: new Date(Date.UTC(2026, 10, 28, 12, minute)),
  returned,
});

describe('which Pix a refund returns (contract §16)', () => {
  it('takes the newest Pix first, each at most what it brought less its earlier devoluções, then older ones', () => {
    const received = [pix('OLD', 10_000, 0), pix('NEW', 3_000, 30, 1_000), pix('MID', 5_000, 10)];
    expect(planDevolucoes(1_500, received)).toEqual({
      parts: [{ endToEndId: 'NEW', amount: 1_500 }],
      unplaced: 0,
    });
    // NEW has 2,000 left; MID all of its 5,000; OLD the rest.
    expect(planDevolucoes(9_000, received)).toEqual({
      parts: [
        { endToEndId: 'NEW', amount: 2_000 },
        { endToEndId: 'MID', amount: 5_000 },
        { endToEndId: 'OLD', amount: 2_000 },
      ],
      unplaced: 0,
    });
    expect(returnableAmount(received)).toBe(17_000);
    expect(planDevolucoes(17_001, received).unplaced).toBe(1);
  });

  it('skips a Pix returned in full, and places nothing without Pix', () => {
    expect(planDevolucoes(500, [pix('A', 1_000, 5, 1_000), pix('B', 800, 1)]).parts).toEqual([
      { endToEndId: 'B', amount: 500 },
    ]);
    expect(planDevolucoes(500, [])).toEqual({ parts: [], unplaced: 500 });
  });

  it('orders Pix of the same instant by end-to-end id, the same way every time', () => {
    const same = [pix('E1', 100, 0), pix('E2', 100, 0)];
    expect(planDevolucoes(150, same).parts.map((part) => part.endToEndId)).toEqual(['E2', 'E1']);
    expect(planDevolucoes(150, [...same].reverse()).parts).toEqual(planDevolucoes(150, same).parts);
  });

  it('never plans more than 99 devoluções in one refund', () => {
    const many = Array.from({ length: 120 }, (_, i) => pix(`P${String(i).padStart(3, '0')}`, 1, i));
    const plan = planDevolucoes(120, many);
    expect(plan.parts).toHaveLength(99);
    expect(plan.unplaced).toBe(21);
    expect(returnableAmount(many)).toBe(99);
  });
});

describe('devolução ids', () => {
  const hex = '0123456789abcdef0123456789abcdef';
  it('derive from the refund, stable and within the API Pix’s 35 characters of [a-zA-Z0-9]', () => {
    expect(refundIdFor.transaction(`txn_${hex}`)).toBe(`rfd_${hex}`);
    expect(refundIdFor.approval(`apr_${hex}`)).toBe(`rfd_${hex}`);
    const id = devolucaoId(`rfd_${hex}`, 7);
    expect(id).toBe(`D${hex}07`);
    expect(id).toMatch(/^[a-zA-Z0-9]{1,35}$/);
    expect(devolucaoId(`rfd_${hex}`, 98)).toHaveLength(35);
  });

  it('refuse what is not a refund id or a position out of range', () => {
    expect(() => devolucaoId(`rfd_${hex}`, 99)).toThrow(RangeError);
    expect(() => devolucaoId(`rfd_${hex}`, -1)).toThrow(RangeError);
    expect(() => devolucaoId(`apr_${hex}`, 0)).toThrow();
    expect(() => refundIdFor.transaction(`txn_${hex.toUpperCase()}`)).toThrow();
  });
});
