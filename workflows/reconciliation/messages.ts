/**
 * The contract of the daily reconciliation's workflow (contract §16): `reconciliation/{date}/{run}`
 * when ops ask for a date, or the schedule's (`reconciliation/daily-…`), which names no date and
 * reconciles the business date before the one it starts on.
 */
export interface ReconciliationInput {
  /** The business date (São Paulo, `YYYY-MM-DD`); absent: the day before today (the schedule's). */
  date?: string;
}

export interface ReconciliationOutcome {
  date: string;
  status: 'matched' | 'discrepancies' | 'failed';
  /** Pix the run stored and booked because no notification had. */
  stored: number;
  discrepancies: number;
}
