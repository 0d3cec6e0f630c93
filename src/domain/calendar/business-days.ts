import { nationalBankHolidays, NATIONAL_CALENDAR_YEARS } from './bank-holidays.js';

/**
 * Business days in Brazil for the money rules (contract §13, Lei 7.089/1983): Monday to Friday,
 * except the national bank holidays (Res. CMN 4.880/2020: the national holidays, Carnival Monday
 * and Tuesday, Good Friday and Corpus Christi). Dates are calendar dates, `YYYY-MM-DD`. Pure and
 * deterministic, so the loan workflow can use it too.
 */
const holidays = new Set(nationalBankHolidays);

const DAY_MS = 86_400_000;
const parse = (date: string): number => {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(ms))
    throw new RangeError(`not a date: ${date}`);
  const year = Number(date.slice(0, 4));
  if (year < NATIONAL_CALENDAR_YEARS.first || year > NATIONAL_CALENDAR_YEARS.last)
    throw new RangeError(
      `${date} is outside the bank calendar shipped (${NATIONAL_CALENDAR_YEARS.first}–${NATIONAL_CALENDAR_YEARS.last})`,
    );
  return ms;
};
const format = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function isBusinessDay(date: string): boolean {
  const weekday = new Date(parse(date)).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !holidays.has(date);
}

/** `date` itself when it is a business day, else the first business day after it. */
export function businessDayOnOrAfter(date: string): string {
  let ms = parse(date);
  while (!isBusinessDay(format(ms))) ms += DAY_MS;
  return format(ms);
}

/**
 * The last day an installment due on `dueDate` is paid without late charges: its due date, or —
 * when that is not a business day — the next business day (Lei 7.089/1983). It becomes overdue
 * when this day ends. Late interest, once owed, still counts from the due date (contract §13).
 */
export const lastDayWithoutCharges = businessDayOnOrAfter;
