/**
 * Write-off (contract §17): a loan with a row overdue more than WRITE_OFF_AFTER_DAYS leaves the
 * book — its unpaid principal moves from `loan_principal` to `credit_losses` — while the borrower
 * owes exactly what they owed. Pure: the loan workflow's timer and the activity that writes it
 * read the same rule.
 */
import { addDays, daysBetween, startOfBusinessDate } from '../business-date.js';

/** WRITE_OFF_AFTER_DAYS when unset. */
export const DEFAULT_WRITE_OFF_AFTER_DAYS = 360;

/**
 * The instant a row due on `dueDate` has been overdue more than `afterDays` days: the start of
 * day `dueDate + afterDays + 1` in São Paulo. Days count from the due date itself, as late
 * interest does (§13); a due date on a holiday gains nothing here, a year being what it is.
 */
export const writeOffDeadline = (dueDate: string, afterDays: number): number =>
  startOfBusinessDate(addDays(dueDate, afterDays + 1));

/**
 * The row that writes the loan off on `date`: the oldest row shown `overdue` for more than
 * `afterDays` days. Only `overdue` counts: a row in any other status (paid, pending, or one an
 * agreement renegotiated) never writes a loan off.
 */
export function writeOffRow<Row extends { number: number; due_date: string; status: string }>(
  schedule: readonly Row[],
  date: string,
  afterDays: number,
): Row | undefined {
  return schedule.find(
    (row) => row.status === 'overdue' && daysBetween(row.due_date, date) > afterDays,
  );
}
