/**
 * The tables of the Banco Central's Documento 3040 (SCR) this service uses, each from the
 * layout's annexes (`docs/regulatory/scr3040.md` cites where): maturity buckets (Anexo 1), the
 * nature of the operation (Anexo 2), the modality (Anexo 3), the risk classes (Anexos 16/17) by
 * days overdue (Resolução CMN 2.682, art. 4º, I) and their minimum provisions (art. 6º), and the
 * value bands of aggregated operations (Anexo 14). Pure and deterministic.
 */
import { daysBetween } from '../business-date.js';

/** Anexo 1, "créditos a vencer": days from the data-base to the due date, at most `max`. */
export const dueBuckets = [
  { code: 'v110', max: 30 },
  { code: 'v120', max: 60 },
  { code: 'v130', max: 90 },
  { code: 'v140', max: 180 },
  { code: 'v150', max: 360 },
  { code: 'v160', max: 720 },
  { code: 'v165', max: 1080 },
  { code: 'v170', max: 1440 },
  { code: 'v175', max: 1800 },
  { code: 'v180', max: 5400 },
  { code: 'v190', max: Number.POSITIVE_INFINITY },
] as const;

/** Anexo 1, "créditos vencidos": days from the due date to the data-base, at most `max`. */
export const overdueBuckets = [
  { code: 'v205', max: 14 },
  { code: 'v210', max: 30 },
  { code: 'v220', max: 60 },
  { code: 'v230', max: 90 },
  { code: 'v240', max: 120 },
  { code: 'v245', max: 150 },
  { code: 'v250', max: 180 },
  { code: 'v255', max: 240 },
  { code: 'v260', max: 300 },
  { code: 'v270', max: 360 },
  { code: 'v280', max: 540 },
  { code: 'v290', max: Number.POSITIVE_INFINITY },
] as const;

/** Anexo 1, "créditos baixados como prejuízo": whole months since the write-off, at most `max`. */
export const writtenOffBuckets = [
  { code: 'v310', max: 12 },
  { code: 'v320', max: 48 },
  { code: 'v330', max: Number.POSITIVE_INFINITY },
] as const;

export type BucketCode =
  | (typeof dueBuckets)[number]['code']
  | (typeof overdueBuckets)[number]['code']
  | (typeof writtenOffBuckets)[number]['code'];

/** Every bucket in the layout's order (the order of the `Venc` attributes). */
export const bucketOrder: readonly BucketCode[] = [
  ...dueBuckets.map((b) => b.code),
  ...overdueBuckets.map((b) => b.code),
  ...writtenOffBuckets.map((b) => b.code),
];

const pick = <B extends { code: string; max: number }>(table: readonly B[], n: number) =>
  table.find((bucket) => n <= bucket.max)!.code as B['code'];

/**
 * The bucket of a row due on `dueDate` seen on the data-base's last day `monthEnd`: a row due that
 * day or later is "a vencer" (0–30 days: v110); one due before is overdue by the calendar days
 * since its due date (1–14 days: v205).
 */
export function bucketOfRow(dueDate: string, monthEnd: string): BucketCode {
  const days = daysBetween(monthEnd, dueDate);
  return days >= 0 ? pick(dueBuckets, days) : pick(overdueBuckets, -days);
}

/** Whole calendar months from `from` to `to` (`YYYY-MM-DD`): 2026-01-31 → 2026-02-28 is 0. */
export function monthsBetween(from: string, to: string): number {
  const [fy, fm] = from.split('-').map(Number) as [number, number];
  const [ty, tm] = to.split('-').map(Number) as [number, number];
  let months = (ty - fy) * 12 + (tm - fm);
  // A month counts once its day is reached (clamped to the month's last day: Jan 31 → Feb 28).
  const lastDay = Number(lastDayOfMonth(to.slice(0, 7)).slice(8));
  if (Number(to.slice(8)) < Math.min(Number(from.slice(8)), lastDay)) months -= 1;
  return Math.max(0, months);
}

/** The written-off bucket of a loan written off on `writtenOffOn`, seen on `monthEnd`. */
export const bucketOfWriteOff = (writtenOffOn: string, monthEnd: string): BucketCode =>
  pick(writtenOffBuckets, monthsBetween(writtenOffOn, monthEnd));

/** `YYYY-MM` → its last day, `YYYY-MM-DD`. */
export function lastDayOfMonth(month: string): string {
  const [year, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, m, 0)).toISOString().slice(0, 10);
}

/** Anexos 16 and 17: the risk levels of Resolução 2.682 (art. 1º), HH for a loan written off. */
export const riskClasses = ['AA', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'HH'] as const;
export type RiskClass = (typeof riskClasses)[number];

/**
 * Resolução CMN 2.682, art. 4º, I: the level by the days the oldest unpaid row is overdue — at
 * most 14 days A (art. 5º: the arrears model's floor), 15–30 B, 31–60 C, 61–90 D, 91–120 E,
 * 121–150 F, 151–180 G, beyond H. No doubling of the periods (art. 4º §1; `PrzProvm` N).
 */
export function riskClassOf(daysOverdue: number): RiskClass {
  if (daysOverdue <= 14) return 'A';
  if (daysOverdue <= 30) return 'B';
  if (daysOverdue <= 60) return 'C';
  if (daysOverdue <= 90) return 'D';
  if (daysOverdue <= 120) return 'E';
  if (daysOverdue <= 150) return 'F';
  if (daysOverdue <= 180) return 'G';
  return 'H';
}

/** Resolução 2.682, art. 6º: the minimum provision of each level, as a fraction of the balance. */
export const minimumProvision: Record<RiskClass, string> = {
  AA: '0',
  A: '0.005',
  B: '0.01',
  C: '0.03',
  D: '0.1',
  E: '0.3',
  F: '0.5',
  G: '0.7',
  H: '1',
  // Written off: out of the balance sheet, nothing left to provide for.
  HH: '0',
};

/** The client's class (Res. 2.682, art. 3º): the riskiest of its operations; H for HH (Anexo 16). */
export function clientRiskClass(classes: readonly RiskClass[]): Exclude<RiskClass, 'HH'> {
  const worst = classes.reduce<RiskClass>(
    (a, b) => (riskClasses.indexOf(b) > riskClasses.indexOf(a) ? b : a),
    'AA',
  );
  return worst === 'HH' ? 'H' : worst;
}

/**
 * Anexo 3, the modality: a person's loan without payroll deduction is 0203 (crédito pessoal — sem
 * consignação em folha); a company's term loan is working capital, 0215 up to 365 days from the
 * contract to the last due date, 0216 beyond.
 */
export function modalityOf(borrower: 'person' | 'company', termDays: number): string {
  if (borrower === 'person') return '0203';
  return termDays <= 365 ? '0215' : '0216';
}

/** Anexo 14, `FaixaVlr`: the band of an aggregated operation's balance (centavos). */
export function valueBandOf(centavos: number): '1' | '2' | '3' | '4' | '5' {
  if (centavos < 100_00) return '1';
  if (centavos < 500_00) return '2';
  if (centavos < 1_000_00) return '3';
  if (centavos < 5_000_00) return '4';
  return '5';
}

/**
 * Anexo 28, `DesempOp`, of an aggregated operation: 01 nothing overdue ("a vencer"), then by the
 * days the oldest row is overdue; 06 written off. Overdue 1–14 days stays 01, as the annex has no
 * band for it.
 */
export function performanceOf(daysOverdue: number, writtenOff: boolean): string {
  if (writtenOff) return '06';
  if (daysOverdue < 15) return '01';
  if (daysOverdue <= 30) return '02';
  if (daysOverdue <= 60) return '03';
  if (daysOverdue <= 90) return '04';
  return '05';
}
