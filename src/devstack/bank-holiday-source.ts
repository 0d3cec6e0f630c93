import Holidays from 'date-holidays';

/**
 * Brazil's national bank holidays for `first`…`last` as `date-holidays` knows them: its `public`
 * and `bank` holidays of BR (Carnival Monday and Tuesday and Corpus Christi are `bank`), without
 * election days (Sundays, not holidays of the bank calendar). Development only: the service ships
 * what this returns as data (src/domain/calendar/bank-holidays.ts).
 */
export function nationalBankHolidaysFromLibrary(first: number, last: number): string[] {
  const calendar = new Holidays('BR');
  const dates = new Set<string>();
  for (let year = first; year <= last; year++) {
    for (const holiday of calendar.getHolidays(year)) {
      if (holiday.type !== 'public' && holiday.type !== 'bank') continue;
      if (/elei/i.test(holiday.name)) continue;
      dates.add(holiday.date.slice(0, 10));
    }
  }
  return [...dates].sort();
}
