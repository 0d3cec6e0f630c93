/**
 * Business dates are calendar dates in America/Sao_Paulo (contract §1): the day a borrower would
 * name, whatever the server's zone.
 */
const saoPaulo = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Sao_Paulo',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** The `YYYY-MM-DD` date in São Paulo at an instant. */
export function businessDate(at: Date): string {
  return saoPaulo.format(at);
}

/** `YYYY-MM-DD` plus whole days (calendar arithmetic, no zone involved). */
export function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}
