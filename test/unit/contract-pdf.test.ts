import { createHash } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { describe, expect, it } from 'vitest';
import { simulateLoan } from '../../src/domain/credit/simulation.js';
import { renderContractPdf, type ContractInput } from '../../src/domain/loans/contract-pdf.js';
import { formatBrl } from '../../src/domain/money.js';
import { decreeIof as iof } from '../helpers/iof.js';

function input(installments: number, overrides: Partial<ContractInput> = {}): ContractInput {
  return {
    loanId: `ln_${'ab'.repeat(16)}`,
    issuedAt: new Date('2026-11-22T15:00:00Z'),
    environment: 'sandbox',
    lender: { name: 'Embedded Credit SCD S.A.', cnpj: '11222333000181' },
    borrower: {
      name: 'João da Conceição',
      cpf: '52998224725',
      email: 'joao@example.com',
      cnpj: null,
      tradingName: null,
    },
    signers: [{ name: 'Maria Fiadora', cpf: '11144477735', email: null }],
    figures: simulateLoan({
      requestedAmount: 1_234_567,
      installments,
      monthlyInterestRate: '0.0199',
      releaseDate: '2026-11-22',
      firstDueDate: '2026-12-31',
      borrower: 'individual',
      iof,
    }),
    lateCharges: { feeRate: '0.02', monthlyInterestRate: '0.01' },
    disbursementAccount: { type: 'pix', pix_key: '+5511987654321', pix_key_type: 'phone' },
    ...overrides,
  };
}

/** Each page's text, as a PDF reader extracts it. */
async function pagesOf(bytes: Uint8Array): Promise<string[]> {
  const pdf = await getDocument({
    data: new Uint8Array(bytes),
    useSystemFonts: false,
    disableFontFace: true,
  }).promise;
  const pages: string[] = [];
  for (let n = 1; n <= pdf.numPages; n++) {
    const content = await (await pdf.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  return pages;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('the contract (CCB) PDF', () => {
  it('opens, and says who owes what to whom, at what cost, into which account, on which dates', async () => {
    const contract = input(12);
    const bytes = await renderContractPdf(contract);
    expect((await PDFDocument.load(bytes)).getTitle()).toBe(`CCB ${contract.loanId}`);
    const text = (await pagesOf(bytes)).join(' ');
    const f = contract.figures;
    for (const expected of [
      'Cédula de Crédito Bancário',
      'João da Conceição',
      '529.982.247-25',
      'Maria Fiadora',
      '111.444.777-35',
      '11.222.333/0001-81',
      formatBrl(f.requested_amount),
      formatBrl(f.iof_amount),
      formatBrl(f.principal_amount),
      formatBrl(f.total_amount),
      `${(f.cet_annual * 100).toFixed(2).replace('.', ',')} % a.a.`,
      '1,99 % a.m.',
      '+5511987654321',
      'SANDBOX',
      'multa de 2,00 %',
      'juros de mora de 1,00 % ao mês, pro rata die',
    ])
      expect(text).toContain(expected);
    for (const row of f.schedule) {
      expect(text).toContain(row.due_date.split('-').reverse().join('/'));
      expect(text).toContain(formatBrl(row.installment_amount));
    }
  });

  it('carries a 360-row schedule over pages, every row once, numbered pages', async () => {
    const contract = input(360);
    const pages = await pagesOf(await renderContractPdf(contract));
    expect(pages.length).toBeGreaterThan(5);
    // The schedule's section: the first due date also appears among the figures above it.
    const text = pages.join(' ').split('Cronograma de pagamento')[1]!.split('Cláusulas')[0]!;
    for (const row of contract.figures.schedule) {
      const dated = text.split(row.due_date.split('-').reverse().join('/')).length - 1;
      expect({ row: row.number, dated }).toEqual({ row: row.number, dated: 1 });
    }
    expect(pages.at(-1)).toContain(`Página ${pages.length} de ${pages.length}`);
  });

  it('is the same bytes for the same terms, and other bytes for other terms', async () => {
    const a = await renderContractPdf(input(12));
    const b = await renderContractPdf(input(12));
    expect(sha256(a)).toBe(sha256(b));
    const other = input(12);
    other.figures = { ...other.figures, installment_amount: other.figures.installment_amount + 1 };
    expect(sha256(await renderContractPdf(other))).not.toBe(sha256(a));
  });

  it('names the contracts it refinances, their payoff and the rest released (contract §17)', async () => {
    const plain = await renderContractPdf(input(12));
    const old = `ln_${'cd'.repeat(16)}`;
    const contract = input(12, {
      refinanced: [{ loanId: old, payoffAmount: 456_789, date: '2026-11-22' }],
    });
    const bytes = await renderContractPdf(contract);
    const text = (await pagesOf(bytes)).join(' ');
    for (const expected of [
      'Contratos refinanciados',
      `Quitação da CCB ${old} em 22/11/2026`,
      formatBrl(456_789),
      formatBrl(contract.figures.requested_amount - 456_789),
    ])
      expect(text).toContain(expected);
    expect(sha256(bytes)).not.toBe(sha256(plain));
    // No refinancing: the section is absent and the bytes are what they were.
    expect(sha256(await renderContractPdf(input(12, { refinanced: [] })))).toBe(sha256(plain));
    expect((await pagesOf(plain)).join(' ')).not.toContain('refinanciados');
  });

  it('marks sandbox contracts, and only those', async () => {
    const production = (
      await pagesOf(await renderContractPdf(input(3, { environment: 'production' })))
    ).join(' ');
    expect(production).not.toContain('SANDBOX');
  });

  it('formats centavos as reais without floats', () => {
    expect(formatBrl(0)).toBe('R$ 0,00');
    expect(formatBrl(5)).toBe('R$ 0,05');
    expect(formatBrl(123_456_789)).toBe('R$ 1.234.567,89');
    expect(formatBrl(-150)).toBe('-R$ 1,50');
  });
});
