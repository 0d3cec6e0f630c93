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

/** Whole calendar days from a to b (`YYYY-MM-DD`). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

/**
 * The instant a business date begins in São Paulo (epoch ms). The zone has kept UTC−3 all year
 * since 2019; the zone's own calendar confirms it, and settles dates under the old summer time.
 */
export function startOfBusinessDate(date: string): number {
  const standard = Date.parse(`${date}T03:00:00Z`);
  for (const at of [standard, standard - 3_600_000]) {
    if (businessDate(new Date(at)) === date && businessDate(new Date(at - 1)) !== date) return at;
  }
  return standard;
}

/** `2026-11-25` as a reader in Brazil writes it: `25/11/2026`. */
export const brDate = (isoDate: string): string => isoDate.split('-').reverse().join('/');

const saoPauloMinutes = new Intl.DateTimeFormat('pt-BR', {
  timeZone: 'America/Sao_Paulo',
  day: '2-digit',
  month: '2-digit',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** An instant as a reader in Brazil reads it, São Paulo's time: `25/11/2026 23:59` (no comma). */
export function brDateTime(at: Date): string {
  const part = Object.fromEntries(saoPauloMinutes.formatToParts(at).map((p) => [p.type, p.value]));
  return `${part.day}/${part.month}/${part.year} ${part.hour}:${part.minute}`;
}
