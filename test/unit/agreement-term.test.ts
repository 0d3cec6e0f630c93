import { createHash } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { describe, expect, it } from 'vitest';
import { parseKeyRing } from '../../src/domain/key-ring.js';
import {
  acceptanceToken,
  acceptanceUrls,
  agreementIdOfAcceptanceToken,
} from '../../src/domain/loans/acceptance-token.js';
import {
  renderAgreementTermPdf,
  type AgreementTermInput,
} from '../../src/domain/loans/agreement-term-pdf.js';
import { simulateAgreement } from '../../src/domain/loans/agreements.js';
import { startRepayment } from '../../src/domain/loans/allocation.js';
import { optOutToken } from '../../src/domain/reminders/opt-out-token.js';

const lateCharges = { feeRate: '0.02', monthlyInterestRate: '0.01' };

/** docs/agreements.md's worked example: two overdue rows, 50 % off, 4 rows from 2026-03-26. */
const input = (): AgreementTermInput => ({
  agreementId: `agr_${'ab'.repeat(16)}`,
  loanId: `ln_${'cd'.repeat(16)}`,
  issuedAt: new Date('2026-03-16T15:00:00Z'),
  acceptanceDeadline: new Date('2026-03-27T02:59:59.999Z'),
  environment: 'production',
  lender: { name: 'Embedded Credit SCD S.A.', cnpj: '11222333000181' },
  borrower: { name: 'João da Conceição', cpf: '52998224725', cnpj: null, tradingName: null },
  figures: simulateAgreement(
    startRepayment(
      [
        { number: 1, due_date: '2026-02-04', installment_amount: 34675 },
        { number: 2, due_date: '2026-03-06', installment_amount: 34675 },
        { number: 3, due_date: '2026-04-05', installment_amount: 34676 },
      ],
      100000,
    ),
    {
      date: '2026-03-16',
      scope: 'overdue',
      discount: { percentage: '50' },
      installments: 4,
      firstDueDate: '2026-03-26',
    },
    { monthlyRate: '0.02', lateCharges },
  ),
  lateCharges,
  breakDays: 30,
});

async function textOf(bytes: Uint8Array): Promise<string> {
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
  return pages.join(' ');
}
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('the agreement’s term (contract §17)', () => {
  it('names the parties and the contract, the debt, the discount, the agreed balance and the rows of the worked example', async () => {
    const term = input();
    const bytes = await renderAgreementTermPdf(term);
    expect((await PDFDocument.load(bytes)).getTitle()).toBe(`Termo de acordo ${term.agreementId}`);
    const text = await textOf(bytes);
    // docs/agreements.md's figures, written out by hand.
    for (const expected of [
      'Termo de Acordo de Pagamento',
      'João da Conceição, CPF 529.982.247-25',
      '11.222.333/0001-81',
      term.loanId,
      'R$ 358,31',
      'R$ 354,85',
      'R$ 713,16',
      'R$ 27,68',
      'R$ 685,48',
      'R$ 177,78',
      'R$ 177,77',
      '26/06/2026',
      '2,00 % a.m.',
      // The deadline, São Paulo's time: the end of the first row's due date.
      '26/03/2026 23:59',
      'vencida há mais de 30 dias',
    ])
      expect(text).toContain(expected);
    expect(text).not.toContain('SANDBOX');
  });

  it('is the same bytes for the same agreement, other bytes for another', async () => {
    const a = await renderAgreementTermPdf(input());
    expect(sha256(await renderAgreementTermPdf(input()))).toBe(sha256(a));
    expect(sha256(await renderAgreementTermPdf({ ...input(), breakDays: 31 }))).not.toBe(sha256(a));
  });
});

describe('the acceptance link', () => {
  const ring = parseKeyRing('k1:' + 'a'.repeat(43) + ',k0:' + 'b'.repeat(43)).ring!;
  const agreement = `agr_${'1'.repeat(32)}`;

  it('opens its agreement only, nothing once altered or under a dropped key, and is no other link', () => {
    const token = acceptanceToken(ring, agreement);
    expect(agreementIdOfAcceptanceToken(ring, token)).toBe(agreement);
    expect(acceptanceUrls('https://api.example.com', ring)(agreement)).toBe(
      `https://api.example.com/hosted/agreements/${token}`,
    );
    expect(
      agreementIdOfAcceptanceToken(
        ring,
        token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      ),
    ).toBeUndefined();
    expect(agreementIdOfAcceptanceToken(ring, token.replace('1', '2'))).toBeUndefined();
    const rotated = parseKeyRing('k2:' + 'c'.repeat(43)).ring!;
    expect(agreementIdOfAcceptanceToken(rotated, token)).toBeUndefined();
    // Another link's HMAC under the same key, moved onto this id, opens nothing.
    const optOutMac = optOutToken(ring, `cust_${'1'.repeat(32)}`).split('.')[2]!;
    expect(agreementIdOfAcceptanceToken(ring, `${agreement}.k1.${optOutMac}`)).toBeUndefined();
  });
});
