import { PDFDocument, rgb, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';
import { brDate } from '../business-date.js';
import type { SimulationFigures } from '../credit/simulation.js';
import type { Environment } from '../environments.js';
import { formatBrl, formatRate } from '../money.js';
import type { DisbursementAccount } from './disbursement-account.js';
import type { LateChargeRates } from './repayment.js';

export interface ContractParty {
  name: string;
  cpf: string;
  email: string | null;
}

export interface ContractInput {
  loanId: string;
  /**
   * When the loan is made, on the customer's clock (in production its `created_at`): the issue
   * date, and the PDF's creation and modification dates.
   */
  issuedAt: Date;
  environment: Environment;
  lender: { name: string; cnpj: string };
  borrower: ContractParty & { cnpj: string | null; tradingName: string | null };
  /** Signers besides the borrower. */
  signers: ContractParty[];
  figures: SimulationFigures;
  /** The loan's late-charge terms (contract §12), stated in a clause. */
  lateCharges: LateChargeRates;
  disbursementAccount: DisbursementAccount;
  /**
   * The contracts this one refinances (contract §17), each paid off from the amount released on
   * `date` (the planned release): named in a section of their own. Absent or empty: none.
   */
  refinanced?: readonly { loanId: string; payoffAmount: number; date: string }[];
}

export const A4 = { width: 595.28, height: 841.89 };
export const MARGIN = 50;
const SIZE = 10;
const LEADING = 14;

export const formatCpf = (cpf: string) =>
  `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`;
export const formatCnpj = (cnpj: string) =>
  `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;

const pixKinds: Record<string, string> = {
  cpf: 'CPF',
  cnpj: 'CNPJ',
  email: 'e-mail',
  phone: 'telefone',
  evp: 'chave aleatória',
};
const accountKinds: Record<string, string> = {
  checking: 'conta corrente',
  savings: 'conta poupança',
  payment: 'conta de pagamento',
};

/**
 * Writes text top-down over as many A4 pages as it needs: the cursor moves down a line at a time
 * and a new page starts when the margin is reached.
 */
export class Layout {
  page!: PDFPage;
  y = 0;
  readonly pages: PDFPage[] = [];

  constructor(
    private readonly doc: PDFDocument,
    readonly regular: PDFFont,
    readonly bold: PDFFont,
    private readonly banner: string | null,
  ) {
    this.newPage();
  }

  newPage(): void {
    this.page = this.doc.addPage([A4.width, A4.height]);
    this.pages.push(this.page);
    this.y = A4.height - MARGIN;
    if (this.banner) {
      this.page.drawText(this.banner, {
        x: MARGIN,
        y: A4.height - 30,
        size: 9,
        font: this.bold,
        color: rgb(0.75, 0.1, 0.1),
      });
    }
  }

  /** Room for `lines` more lines, or a new page. */
  ensure(lines: number): void {
    if (this.y - lines * LEADING < MARGIN + 20) this.newPage();
  }

  line(text: string, options: { bold?: boolean; size?: number; x?: number } = {}): void {
    this.ensure(1);
    const font = options.bold ? this.bold : this.regular;
    this.page.drawText(safe(text, font), {
      x: options.x ?? MARGIN,
      y: this.y,
      size: options.size ?? SIZE,
      font,
    });
    this.y -= LEADING * ((options.size ?? SIZE) / SIZE);
  }

  /** A paragraph wrapped to the page's width. */
  paragraph(text: string): void {
    const width = A4.width - 2 * MARGIN;
    let current = '';
    for (const word of safe(text, this.regular).split(' ')) {
      const candidate = current ? `${current} ${word}` : word;
      if (this.regular.widthOfTextAtSize(candidate, SIZE) > width && current) {
        this.line(current);
        current = word;
      } else current = candidate;
    }
    if (current) this.line(current);
    this.gap();
  }

  /** A row of cells at fixed x positions, right-aligned where asked. */
  row(cells: { text: string; x: number; right?: boolean }[], bold = false): void {
    this.ensure(1);
    const font = bold ? this.bold : this.regular;
    for (const cell of cells) {
      const text = safe(cell.text, font);
      const x = cell.right ? cell.x - font.widthOfTextAtSize(text, SIZE) : cell.x;
      this.page.drawText(text, { x, y: this.y, size: SIZE, font });
    }
    this.y -= LEADING;
  }

  gap(): void {
    this.y -= LEADING / 2;
  }

  heading(text: string): void {
    this.ensure(3);
    this.gap();
    this.line(text, { bold: true, size: 12 });
  }

  /** A Price schedule, one row an installment, its header again at the top of each new page. */
  schedule(rows: readonly ScheduleRow[]): void {
    const columns = [MARGIN, 130, 260, 340, 420, A4.width - MARGIN];
    const header = () =>
      this.row(
        [
          { text: 'Nº', x: columns[0]! },
          { text: 'Vencimento', x: columns[1]! },
          { text: 'Parcela', x: columns[2]!, right: true },
          { text: 'Amortização', x: columns[3]!, right: true },
          { text: 'Juros', x: columns[4]!, right: true },
          { text: 'Saldo devedor', x: columns[5]!, right: true },
        ],
        true,
      );
    header();
    for (const row of rows) {
      const pages = this.pages.length;
      this.ensure(1);
      if (this.pages.length !== pages) header();
      this.row([
        { text: String(row.number), x: columns[0]! },
        { text: brDate(row.due_date), x: columns[1]! },
        { text: formatBrl(row.installment_amount), x: columns[2]!, right: true },
        { text: formatBrl(row.principal_amount), x: columns[3]!, right: true },
        { text: formatBrl(row.interest_amount), x: columns[4]!, right: true },
        { text: formatBrl(row.balance_amount), x: columns[5]!, right: true },
      ]);
    }
  }

  /** Numbers every page in its footer, `Página i de n · {label}`. */
  footers(label: string): void {
    const total = this.pages.length;
    this.pages.forEach((page, index) => {
      const text = `Página ${index + 1} de ${total} · ${label}`;
      page.drawText(safe(text, this.regular), { x: MARGIN, y: 25, size: 8, font: this.regular });
    });
  }
}

export interface ScheduleRow {
  number: number;
  due_date: string;
  installment_amount: number;
  principal_amount: number;
  interest_amount: number;
  balance_amount: number;
}

/**
 * A new document of the lender's (its metadata dated `issuedAt`, so the same input gives the same
 * bytes) and its layout, every page of a sandbox document under the test banner.
 */
export async function openDocument(input: {
  title: string;
  subject: string;
  lender: { name: string };
  issuedAt: Date;
  environment: Environment;
}): Promise<{ doc: PDFDocument; layout: Layout }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle(input.title);
  doc.setAuthor(input.lender.name);
  doc.setSubject(input.subject);
  doc.setProducer('embedded-credit');
  doc.setCreator('embedded-credit');
  doc.setCreationDate(input.issuedAt);
  doc.setModificationDate(input.issuedAt);
  const layout = new Layout(
    doc,
    await doc.embedFont(StandardFonts.Helvetica),
    await doc.embedFont(StandardFonts.HelveticaBold),
    input.environment === 'sandbox' ? 'SANDBOX — documento de teste, sem valor legal' : null,
  );
  return { doc, layout };
}

/** Only what the standard fonts' WinAnsi encoding can draw (Portuguese accents are in it). */
export function safe(text: string, font: PDFFont): string {
  return [...text.normalize('NFC')]
    .map((char) => {
      try {
        font.encodeText(char);
        return char;
      } catch {
        return '?';
      }
    })
    .join('');
}

/**
 * The loan's contract, a Cédula de Crédito Bancário (Lei 10.931/2004): parties, figures, the
 * disbursement account, the whole schedule, the clauses and a signature line per signer. Pure and
 * deterministic: the same input gives the same bytes, so its SHA-256 identifies the terms.
 */
export async function renderContractPdf(input: ContractInput): Promise<Uint8Array> {
  const { doc, layout } = await openDocument({
    title: `CCB ${input.loanId}`,
    subject: 'Cédula de Crédito Bancário',
    lender: input.lender,
    issuedAt: input.issuedAt,
    environment: input.environment,
  });
  const { figures, borrower } = input;

  layout.line('Cédula de Crédito Bancário (CCB)', { bold: true, size: 16 });
  layout.gap();
  layout.line(
    `Nº ${input.loanId} · emitida em ${input.issuedAt.toISOString().slice(0, 10).split('-').reverse().join('/')}`,
  );

  layout.heading('1. Partes');
  layout.line(`Credor: ${input.lender.name}, CNPJ ${formatCnpj(input.lender.cnpj)}`);
  layout.line(`Emitente: ${borrower.name}, CPF ${formatCpf(borrower.cpf)}`);
  if (borrower.cnpj)
    layout.line(
      `Empresa (MEI): ${borrower.tradingName ?? borrower.name}, CNPJ ${formatCnpj(borrower.cnpj)}`,
    );
  if (borrower.email) layout.line(`E-mail: ${borrower.email}`);
  for (const signer of input.signers)
    layout.line(
      `Interveniente: ${signer.name}, CPF ${formatCpf(signer.cpf)}${signer.email ? `, ${signer.email}` : ''}`,
    );

  layout.heading('2. Valores e encargos');
  const amountsAndCharges: [string, string][] = [
    ['Valor liberado ao emitente', formatBrl(figures.requested_amount)],
    ['IOF (financiado)', formatBrl(figures.iof_amount)],
    ['Valor financiado (principal)', formatBrl(figures.principal_amount)],
    [
      'Taxa de juros',
      `${formatRate(figures.monthly_interest_rate)} a.m. · ${formatRate(figures.annual_interest_rate)} a.a.`,
    ],
    [
      'Custo Efetivo Total (CET)',
      `${formatRate(figures.cet_monthly)} a.m. · ${formatRate(figures.cet_annual)} a.a.`,
    ],
    ['Número de parcelas', String(figures.installments)],
    ['Valor da parcela', formatBrl(figures.installment_amount)],
    ['Total a pagar', formatBrl(figures.total_amount)],
    ['Total de juros', formatBrl(figures.total_interest_amount)],
    ['Data prevista de liberação', brDate(figures.release_date)],
    ['Primeiro vencimento', brDate(figures.first_due_date)],
  ];
  for (const [label, value] of amountsAndCharges)
    layout.row([
      { text: label, x: MARGIN },
      { text: value, x: A4.width - MARGIN, right: true },
    ]);

  const refinanced = input.refinanced ?? [];
  if (refinanced.length > 0) {
    // Contract §17: the old contracts are paid off from the amount released; the rest goes out.
    layout.heading('2.1. Contratos refinanciados');
    layout.paragraph(
      'Do valor liberado, o credor quita na data da liberação os contratos abaixo do emitente, pelo saldo devedor dessa data; somente o restante é creditado na conta de liberação. O IOF sobre o saldo refinanciado é cobrado apenas pelos dias que a operação original não pagou, até 365 dias contados dela (Decreto 6.306/2007, art. 7º, § 7º).',
    );
    const payoffTotal = refinanced.reduce((sum, loan) => sum + loan.payoffAmount, 0);
    for (const [label, value] of [
      ...refinanced.map((loan): [string, string] => [
        `Quitação da CCB ${loan.loanId} em ${brDate(loan.date)}`,
        formatBrl(loan.payoffAmount),
      ]),
      ['Restante creditado ao emitente', formatBrl(figures.requested_amount - payoffTotal)] as [
        string,
        string,
      ],
    ])
      layout.row([
        { text: label, x: MARGIN },
        { text: value, x: A4.width - MARGIN, right: true },
      ]);
  }

  layout.heading('3. Conta de liberação');
  const account = input.disbursementAccount;
  layout.line(
    account.type === 'pix'
      ? `Pix, chave ${pixKinds[account.pix_key_type] ?? account.pix_key_type}: ${account.pix_key}`
      : `Banco ${account.bank_code}, agência ${account.branch}, ${accountKinds[account.account_type] ?? account.account_type} ${account.account_number}`,
  );

  layout.heading('4. Cronograma de pagamento');
  layout.schedule(figures.schedule);

  layout.heading('5. Cláusulas');
  for (const clause of [
    `5.1. O emitente pagará ao credor, ou à sua ordem, as parcelas acima nas datas de vencimento, juros capitalizados diariamente à taxa de ${formatRate(figures.monthly_interest_rate)} ao mês sobre dias corridos, contados da data em que o valor é efetivamente liberado ao emitente. Liberado após a data prevista, a primeira parcela é reduzida pelos juros e pelo IOF dos dias sem o dinheiro, e o CET é recalculado; a liberação não ocorre a menos de 7 dias do primeiro vencimento.`,
    '5.2. O IOF devido (Decreto 6.306/2007) é financiado e integra o valor financiado.',
    '5.3. O Custo Efetivo Total foi calculado conforme a Resolução CMN 4.881/2020, sobre as datas e valores do cronograma.',
    `5.4. Sobre parcela paga após o vencimento incidem multa de ${formatRate(input.lateCharges.feeRate)} (Código de Defesa do Consumidor, art. 52, § 1º) e juros de mora de ${formatRate(input.lateCharges.monthlyInterestRate)} ao mês, pro rata die, sobre o valor da parcela, desde o dia seguinte ao vencimento até o pagamento. A parcela que vence em dia não útil pode ser paga no primeiro dia útil seguinte sem esses encargos (Lei 7.089/1983).`,
    '5.5. O emitente pode pagar qualquer valor até o saldo devedor: o pagamento quita primeiro as parcelas vencidas (juros de mora, multa e parcela, da mais antiga à mais recente) e depois as vincendas, a partir da próxima ou da última, pelo valor presente, com redução proporcional dos juros (Código de Defesa do Consumidor, art. 52, § 2º; Resolução CMN 3.516/2007).',
    '5.6. Esta cédula é título executivo extrajudicial (Lei 10.931/2004, art. 28) e é assinada eletronicamente pelas partes (Lei 10.931/2004, art. 29, e MP 2.200-2/2001, art. 10, § 2º); cada assinatura registra data, hora, endereço de origem e o hash deste documento.',
  ])
    layout.paragraph(clause);

  layout.heading('6. Assinaturas');
  for (const party of [borrower, ...input.signers]) {
    layout.ensure(4);
    layout.gap();
    layout.line('_______________________________________________');
    layout.line(`${party.name} — CPF ${formatCpf(party.cpf)}`);
  }

  layout.footers(`CCB ${input.loanId}`);
  return doc.save({ useObjectStreams: false });
}
