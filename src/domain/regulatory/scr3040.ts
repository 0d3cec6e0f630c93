/**
 * The month's Documento 3040 (SCR, contract §19) from month-end snapshots of the production book:
 * per loan its `Venc` buckets, which sum exactly to what it owes that day, its risk class by days
 * overdue and its provision; per borrower its class; borrowers whose total is under the layout's
 * threshold aggregated. Pure — the route reads the snapshots, `scr3040-xml.ts` writes the XML.
 * Every table is `scr3040-tables.ts`'s, cited in `docs/regulatory/scr3040.md`.
 */
import { daysBetween } from '../business-date.js';
import { Decimal, fromCentavos, toCentavos } from '../money.js';
import {
  bucketOfRow,
  bucketOfWriteOff,
  bucketOrder,
  clientRiskClass,
  minimumProvision,
  modalityOf,
  performanceOf,
  riskClassOf,
  valueBandOf,
  type BucketCode,
  type RiskClass,
} from './scr3040-tables.js';

/** Clients whose total responsibility is under this (centavos) are reported aggregated: R$ 200. */
export const INDIVIDUAL_THRESHOLD = 200_00;

/**
 * A sale of the loan (cessão; built by a later part of issue 41). What the lender, the seller
 * (cedente), reports depends on whether it kept the risk (Anexo 2): with substantial retention the
 * loan stays in its 3040 with the nature of a transfer and an `Inf` naming the buyer; without,
 * it leaves the seller's book and its 3040 from the month after the sale.
 */
export interface Assignment {
  /** The buyer's CNPJ (14 digits). */
  assigneeCnpj: string;
  /** A member of the financial system (SFN), an investment fund (a FIDC), or anyone else. */
  assignee: 'sfn_institution' | 'fund' | 'other';
  /** The seller kept substantial risks and benefits (coobrigação). */
  retainsRisk: boolean;
  /** The share of the coobrigação, 0–100 (with `retainsRisk`). */
  coobligationPercent: number;
  /** The sale's business date. */
  date: string;
}

/** What the layout says of a loan and its sale: `NatuOp`, and the `Inf` naming the buyer. */
export type Nature =
  { reported: true; natuOp: string; assignmentInfo: AssignmentInfo | null } | { reported: false };

/** `Inf Tp="0102"` (Anexo 26: cessão, the seller's side): the sale's date, buyer and share. */
export interface AssignmentInfo {
  tp: '0102';
  cd: string;
  ident: string;
  perc: number;
}

/**
 * Anexo 2: 01 granted by the institution itself; sold with retention — 11 to a member of the
 * SFN, 15 to an investment fund, 14 to anyone else (not controlled by the seller); sold without
 * retention — no longer the seller's from the month after the sale (that month it is still
 * reported, with nature 01 and the sale's `Inf`).
 */
export function natureOf(assignment: Assignment | undefined, monthEnd: string): Nature {
  if (!assignment || assignment.date > monthEnd)
    return { reported: true, natuOp: '01', assignmentInfo: null };
  const info: AssignmentInfo = {
    tp: '0102',
    cd: assignment.date,
    ident: assignment.assigneeCnpj.slice(0, 8),
    perc: assignment.retainsRisk ? assignment.coobligationPercent : 0,
  };
  if (!assignment.retainsRisk)
    return assignment.date.slice(0, 7) === monthEnd.slice(0, 7)
      ? { reported: true, natuOp: '01', assignmentInfo: info }
      : { reported: false };
  const natuOp = { sfn_institution: '11', fund: '15', other: '14' }[assignment.assignee];
  return { reported: true, natuOp, assignmentInfo: info };
}

/** A loan at the month's end. */
export interface LoanSnapshot {
  /** `Contrt`: the loan's id. */
  loanId: string;
  /** `DtContr`: the business date the contract was signed. */
  contractDate: string;
  /** `DtVencOp`: the last row's due date. */
  lastDueDate: string;
  /** The contract's annual rate (fraction, e.g. 0.2346 = 23.46 %). */
  annualRate: number;
  /** Rows still owing at the month's end and their balances (centavos): see `month-end.ts`. */
  rows: readonly { dueDate: string; owed: number }[];
  /** The business date it was written off (on or before the month's end), else null. */
  writtenOffOn: string | null;
  assignment?: Assignment | undefined;
}

/** A borrower at the month's end. */
export interface ClientSnapshot {
  type: 'person' | 'company';
  cpf: string;
  /** A company's CNPJ (14 digits). */
  cnpj: string | null;
  /** `IniRelactCli`: the business date the relationship began. */
  relationshipSince: string;
  /** `Localiz` (Anexo 7) of the borrower's address; null: not known. */
  location: string | null;
  /** The borrower's CEP (8 digits); null: not known. */
  cep: string | null;
  loans: readonly LoanSnapshot[];
}

export interface OperationReport {
  contrt: string;
  detCli: string | null;
  natuOp: string;
  mod: string;
  dtContr: string;
  dtVencOp: string;
  classOp: RiskClass;
  cep: string;
  taxEft: string;
  /** Centavos. */
  provConsttd: number;
  /** Centavos per bucket, in the layout's order, no empty bucket. */
  venc: [BucketCode, number][];
  /** Σ venc: what the loan owes at the month's end. */
  owed: number;
  daysOverdue: number;
  writtenOff: boolean;
  assignmentInfo: AssignmentInfo | null;
}

export interface ClientReport {
  tp: '1' | '2';
  cd: string;
  autorzc: 'S' | 'N';
  porteCli: '0';
  iniRelactCli: string;
  classCli: Exclude<RiskClass, 'HH'>;
  operations: OperationReport[];
}

export interface AggregateReport {
  natuOp: string;
  mod: string;
  origemRec: string;
  vincME: 'N';
  classOp: RiskClass;
  faixaVlr: string;
  przProvm: 'N';
  localiz: string;
  tpCli: '1' | '2';
  desempOp: string;
  provConsttd: number;
  qtdOp: number;
  qtdCli: number;
  venc: [BucketCode, number][];
}

export interface Doc3040 {
  dtBase: string;
  /** The institution's CNPJ root (8 digits). */
  cnpj: string;
  remessa: number;
  parte: number;
  tpArq: 'F';
  nomeResp: string;
  emailResp: string;
  telResp: string;
  totalCli: number;
  clients: ClientReport[];
  aggregates: AggregateReport[];
}

/** Where a loan's balance falls: each row by its due date, or all of it written off. */
export function bucketsOf(loan: LoanSnapshot, monthEnd: string): [BucketCode, number][] {
  const sums = new Map<BucketCode, number>();
  for (const row of loan.rows) {
    if (!Number.isSafeInteger(row.owed) || row.owed < 0)
      throw new RangeError(`not a balance: ${row.owed}`);
    if (row.owed === 0) continue;
    const code = loan.writtenOffOn
      ? bucketOfWriteOff(loan.writtenOffOn, monthEnd)
      : bucketOfRow(row.dueDate, monthEnd);
    sums.set(code, (sums.get(code) ?? 0) + row.owed);
  }
  return bucketOrder.filter((code) => sums.has(code)).map((code) => [code, sums.get(code)!]);
}

/** Days the oldest row still owing is overdue at the month's end (0: none is). */
export const daysOverdueOf = (loan: LoanSnapshot, monthEnd: string): number =>
  loan.rows.reduce(
    (most, row) => (row.owed > 0 ? Math.max(most, daysBetween(row.dueDate, monthEnd)) : most),
    0,
  );

/** Percent with two decimals: 0.2346 → "23.46". */
const percent = (rate: number): string => new Decimal(String(rate)).times(100).toFixed(2);

export function operationOf(
  client: ClientSnapshot,
  loan: LoanSnapshot,
  monthEnd: string,
): OperationReport | null {
  const nature = natureOf(loan.assignment, monthEnd);
  if (!nature.reported) return null;
  const venc = bucketsOf(loan, monthEnd);
  const owed = venc.reduce((sum, [, centavos]) => sum + centavos, 0);
  if (owed === 0) return null;
  const daysOverdue = daysOverdueOf(loan, monthEnd);
  const classOp: RiskClass = loan.writtenOffOn ? 'HH' : riskClassOf(daysOverdue);
  return {
    contrt: loan.loanId,
    detCli: client.type === 'company' ? client.cnpj : null,
    natuOp: nature.natuOp,
    mod: modalityOf(client.type, daysBetween(loan.contractDate, loan.lastDueDate)),
    dtContr: loan.contractDate,
    dtVencOp: loan.lastDueDate,
    classOp,
    cep: client.cep ?? '00000000',
    taxEft: percent(loan.annualRate),
    provConsttd: toCentavos(fromCentavos(owed).times(minimumProvision[classOp])),
    venc,
    owed,
    daysOverdue,
    writtenOff: loan.writtenOffOn !== null,
    assignmentInfo: nature.assignmentInfo,
  };
}

/** The header's fields the configuration gives (SCR_INSTITUTION_CNPJ, SCR_RESPONSIBLE_*). */
export interface Institution {
  cnpj: string;
  responsibleName: string;
  responsibleEmail: string;
  responsiblePhone: string;
}

/**
 * The document of `dataBase` (`YYYY-MM`, its last day `monthEnd`): one `Cli` per borrower with
 * something owing, an `Op` per loan; a borrower owing less than R$ 200 in all is aggregated
 * (`Agreg`) with the operations sharing its attributes — when its location is known, as `Localiz`
 * needs it; else reported on its own, never under a location guessed.
 */
export function buildDoc3040(input: {
  dataBase: string;
  monthEnd: string;
  institution: Institution;
  remessa: number;
  clients: readonly ClientSnapshot[];
}): Doc3040 {
  const clients: ClientReport[] = [];
  const aggregates = new Map<string, AggregateReport & { clientKeys: Set<string> }>();
  for (const client of input.clients) {
    const operations = client.loans
      .map((loan) => operationOf(client, loan, input.monthEnd))
      .filter((op): op is OperationReport => op !== null)
      .sort((a, b) => a.contrt.localeCompare(b.contrt));
    if (operations.length === 0) continue;
    const total = operations.reduce((sum, op) => sum + op.owed, 0);
    const tp = client.type === 'company' ? '2' : '1';
    if (total < INDIVIDUAL_THRESHOLD && client.location !== null) {
      for (const op of operations) {
        const group = {
          natuOp: op.natuOp,
          mod: op.mod,
          origemRec: ORIGEM_REC,
          vincME: 'N' as const,
          classOp: op.classOp,
          faixaVlr: valueBandOf(op.owed),
          przProvm: 'N' as const,
          localiz: client.location,
          tpCli: tp,
          desempOp: performanceOf(op.daysOverdue, op.writtenOff),
        } as const;
        const key = Object.values(group).join('|');
        const found = aggregates.get(key) ?? {
          ...group,
          provConsttd: 0,
          qtdOp: 0,
          qtdCli: 0,
          venc: [],
          clientKeys: new Set<string>(),
        };
        found.provConsttd += op.provConsttd;
        found.qtdOp += 1;
        found.clientKeys.add(client.cpf + (client.cnpj ?? ''));
        found.qtdCli = found.clientKeys.size;
        found.venc = mergeBuckets(found.venc, op.venc);
        aggregates.set(key, found);
      }
      continue;
    }
    clients.push({
      tp,
      cd: client.type === 'company' ? client.cnpj!.slice(0, 8) : client.cpf,
      autorzc: 'N',
      porteCli: '0',
      iniRelactCli: client.relationshipSince,
      classCli: clientRiskClass(operations.map((op) => op.classOp)),
      operations,
    });
  }
  const grouped = [...aggregates.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, { clientKeys: _keys, ...aggregate }]) => aggregate);
  clients.sort((a, b) => a.tp.localeCompare(b.tp) || a.cd.localeCompare(b.cd));
  return {
    dtBase: input.dataBase,
    cnpj: input.institution.cnpj.slice(0, 8),
    remessa: input.remessa,
    parte: 1,
    tpArq: 'F',
    nomeResp: input.institution.responsibleName,
    emailResp: input.institution.responsibleEmail,
    telResp: input.institution.responsiblePhone,
    totalCli: clients.length + grouped.reduce((sum, group) => sum + group.qtdCli, 0),
    clients,
    aggregates: grouped,
  };
}

/** Anexo 4: free funds (recursos livres), as Banco Central's examples of own loans report them. */
export const ORIGEM_REC = '0101';

function mergeBuckets(
  a: readonly [BucketCode, number][],
  b: readonly [BucketCode, number][],
): [BucketCode, number][] {
  const sums = new Map<BucketCode, number>(a);
  for (const [code, centavos] of b) sums.set(code, (sums.get(code) ?? 0) + centavos);
  return bucketOrder.filter((code) => sums.has(code)).map((code) => [code, sums.get(code)!]);
}
