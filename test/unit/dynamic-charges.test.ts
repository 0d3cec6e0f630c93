import { describe, expect, it } from 'vitest';
import { cobvValueOn, unsupported } from '../../src/devstack/psp-simulator/cobv-value.js';
import type { CobV } from '../../src/devstack/psp-simulator/state.js';
import { startRepayment, rowValue } from '../../src/domain/loans/allocation.js';
import {
  cobExpiracao,
  cobvTerms,
  lateChargesOf,
  percentOf,
  pspChargeKind,
  txidOfCharge,
} from '../../src/domain/pix/dynamic-charges.js';

const rates = { feeRate: '0.02', monthlyInterestRate: '0.01' };

describe('production charges in the API Pix’s terms (contract §16)', () => {
  it('takes the txid from the charge’s id, 35 letters and digits, the same on every retry', () => {
    const id = 'chg_0123456789abcdef0123456789abcdef';
    expect(txidOfCharge(id)).toBe('chg0123456789abcdef0123456789abcdef');
    expect(txidOfCharge(id)).toMatch(/^[a-zA-Z0-9]{26,35}$/);
    expect(() => txidOfCharge('ln_0123456789abcdef0123456789abcdef')).toThrow(/not a charge id/);
    expect(() => txidOfCharge('chg_0123')).toThrow(/not a charge id/);
  });

  it('makes an installment’s charge a cobv and every other a cob', () => {
    expect(['next', 'overdue'].map((scope) => pspChargeKind(scope as 'next'))).toEqual([
      'cobv',
      'cobv',
    ]);
    expect(
      (['payoff', 'amount', 'withdrawal'] as const).map((scope) => pspChargeKind(scope)),
    ).toEqual(['cob', 'cob', 'cob']);
  });

  it('writes the loan’s rates as multa modality 2 and juros modality 3, to the hundredth of a percent', () => {
    expect(lateChargesOf(rates)).toEqual({
      multa: { modalidade: 2, valorPerc: '2.00' },
      juros: { modalidade: 3, valorPerc: '1.00' },
    });
    expect(lateChargesOf({ feeRate: '0.0125', monthlyInterestRate: '0.0033' })).toEqual({
      multa: { modalidade: 2, valorPerc: '1.25' },
      juros: { modalidade: 3, valorPerc: '0.33' },
    });
    // A rate of 0 charges nothing: left out rather than written as 0.00.
    expect(lateChargesOf({ feeRate: '0', monthlyInterestRate: '0.01' })).toEqual({
      juros: { modalidade: 3, valorPerc: '1.00' },
    });
    // Never rounded: a rate the API Pix cannot write exactly is refused.
    expect(() => percentOf('0.00333')).toThrow(/two decimals/);
  });

  it('dates a row’s charge by the row, or today once it has passed, and states late charges only when the amount has none', () => {
    expect(
      cobvTerms({ rowDueDate: '2026-12-28', today: '2026-11-28', late: false, rates }),
    ).toEqual({
      calendario: { dataDeVencimento: '2026-12-28', validadeAposVencimento: 0 },
      lateCharges: lateChargesOf(rates),
    });
    // Due on a Saturday, charged on the Monday after: not late (Lei 7.089/1983), dated today.
    expect(
      cobvTerms({ rowDueDate: '2026-11-28', today: '2026-11-30', late: false, rates }),
    ).toEqual({
      calendario: { dataDeVencimento: '2026-11-30', validadeAposVencimento: 0 },
      lateCharges: lateChargesOf(rates),
    });
    // Late: the amount carries the fee and the interest already; a multa would charge it twice.
    expect(cobvTerms({ rowDueDate: '2026-10-28', today: '2026-11-28', late: true, rates })).toEqual(
      {
        calendario: { dataDeVencimento: '2026-11-28', validadeAposVencimento: 0 },
        lateCharges: {},
      },
    );
  });

  it('gives a cob the whole seconds from the charge’s creation to its end', () => {
    const at = new Date('2026-11-28T12:00:00.000Z');
    expect(cobExpiracao(at, new Date('2026-11-28T12:00:03.999Z'))).toBe(3);
    expect(cobExpiracao(at, new Date('2026-11-29T03:00:00.000Z'))).toBe(15 * 3600);
    expect(cobExpiracao(at, new Date('2026-11-28T12:00:00.200Z'))).toBe(1);
  });
});

describe('the simulator’s cobv: what it asks on a day, as the API Pix describes', () => {
  const cobv = (valor: CobV['valor'], dataDeVencimento = '2026-12-10'): CobV =>
    ({
      calendario: { dataDeVencimento, validadeAposVencimento: 30 },
      valor,
    }) as CobV;

  it('asks the original up to the due date, then the multa once and the juros a day', () => {
    const charge = cobv({
      original: '1000.00',
      multa: { modalidade: 2, valorPerc: '2.00' },
      juros: { modalidade: 3, valorPerc: '1.00' },
    });
    expect(cobvValueOn(charge, '2026-12-10')).toEqual({
      total: 100_000,
      componentes: { original: { valor: '1000.00' } },
    });
    // 15 days late: 2 % once (20.00) and 1 % a month pro rata die (1000 × 0.01 × 15 / 30 = 5.00).
    expect(cobvValueOn(charge, '2026-12-25')).toEqual({
      total: 102_500,
      componentes: {
        original: { valor: '1000.00' },
        multa: { valor: '20.00' },
        juros: { valor: '5.00' },
      },
    });
  });

  it('asks what the service would: the same fee and interest as a late installment owes', () => {
    // The service's own valuation of a row of 1,234.56 paid 17 days late (loan rates 2 % and 1 %).
    const [row] = startRepayment(
      [{ number: 1, due_date: '2026-12-10', installment_amount: 123_456 }],
      100_000,
    ).rows;
    const ours = rowValue(row!, '2026-12-27', { monthlyRate: '0.02', lateCharges: rates });
    const charge = cobv({ original: '1234.56', ...lateChargesOf(rates) });
    expect(cobvValueOn(charge, '2026-12-27').total).toBe(ours);
  });

  it('takes the other calendar-day modalities, and names what it does not simulate', () => {
    const value = (multa: unknown, juros: unknown) =>
      cobvValueOn(
        cobv({ original: '100.00', multa, juros } as CobV['valor'], '2026-01-01'),
        '2026-01-11',
      ).total;
    expect(value({ modalidade: 1, valorPerc: '3.00' }, { modalidade: 1, valorPerc: '0.10' })).toBe(
      10_000 + 300 + 100,
    );
    expect(value({ modalidade: 2, valorPerc: '1.00' }, { modalidade: 2, valorPerc: '0.50' })).toBe(
      10_000 + 100 + 500,
    );
    // 10 days at 36.50 % a year over 365: exactly 1 %.
    expect(value({ modalidade: 2, valorPerc: '0.00' }, { modalidade: 4, valorPerc: '36.50' })).toBe(
      10_000 + 100,
    );
    expect(unsupported({ juros: { modalidade: 6, valorPerc: '0.10' } })).toMatch(/dias úteis/);
    expect(unsupported({ abatimento: { modalidade: 1, valorPerc: '1.00' } })).toBe('abatimento');
    expect(unsupported({ multa: { modalidade: 2, valorPerc: '2.00' } })).toBeUndefined();
  });
});
