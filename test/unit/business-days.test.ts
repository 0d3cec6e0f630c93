import { describe, expect, it } from 'vitest';
import {
  nationalBankHolidays,
  NATIONAL_CALENDAR_YEARS,
} from '../../src/domain/calendar/bank-holidays.js';
import {
  businessDayOnOrAfter,
  isBusinessDay,
  lastDayWithoutCharges,
} from '../../src/domain/calendar/business-days.js';
import { nationalBankHolidaysFromLibrary } from '../../src/devstack/bank-holiday-source.js';

/**
 * The national bank holidays ANBIMA publishes (anbima.com.br/feriados, "Feriados nacionais"), on
 * which there is no interbank settlement (Res. CMN 4.880/2020), 2026–2030.
 */
const published: Record<number, string[]> = {
  2026: [
    '01-01',
    '02-16',
    '02-17',
    '04-03',
    '04-21',
    '05-01',
    '06-04',
    '09-07',
    '10-12',
    '11-02',
    '11-15',
    '11-20',
    '12-25',
  ],
  2027: [
    '01-01',
    '02-08',
    '02-09',
    '03-26',
    '04-21',
    '05-01',
    '05-27',
    '09-07',
    '10-12',
    '11-02',
    '11-15',
    '11-20',
    '12-25',
  ],
  2028: [
    '01-01',
    '02-28',
    '02-29',
    '04-14',
    '04-21',
    '05-01',
    '06-15',
    '09-07',
    '10-12',
    '11-02',
    '11-15',
    '11-20',
    '12-25',
  ],
  2029: [
    '01-01',
    '02-12',
    '02-13',
    '03-30',
    '04-21',
    '05-01',
    '05-31',
    '09-07',
    '10-12',
    '11-02',
    '11-15',
    '11-20',
    '12-25',
  ],
  2030: [
    '01-01',
    '03-04',
    '03-05',
    '04-19',
    '04-21',
    '05-01',
    '06-20',
    '09-07',
    '10-12',
    '11-02',
    '11-15',
    '11-20',
    '12-25',
  ],
};

describe('the national bank calendar shipped as data', () => {
  it.each(Object.entries(published))('is the published calendar of %s', (year, days) => {
    expect(nationalBankHolidays.filter((date) => date.startsWith(`${year}-`))).toEqual(
      days.map((day) => `${year}-${day}`),
    );
  });

  it('is what the library it was generated from says, for every year shipped (npm run calendar:generate)', () => {
    expect(nationalBankHolidays).toEqual(
      nationalBankHolidaysFromLibrary(NATIONAL_CALENDAR_YEARS.first, NATIONAL_CALENDAR_YEARS.last),
    );
  });
});

describe('business days (Lei 7.089/1983)', () => {
  it('are weekdays that are not national bank holidays', () => {
    expect(isBusinessDay('2026-11-25')).toBe(true); // a Wednesday
    expect(isBusinessDay('2026-11-28')).toBe(false); // Saturday
    expect(isBusinessDay('2026-11-29')).toBe(false); // Sunday
    expect(isBusinessDay('2026-11-20')).toBe(false); // Consciência Negra, a Friday
    expect(isBusinessDay('2027-02-09')).toBe(false); // Carnival Tuesday
    expect(isBusinessDay('2027-02-10')).toBe(true); // Ash Wednesday: banks open at noon
  });

  it('let an installment due on a day without banking be paid on the next business day', () => {
    expect(lastDayWithoutCharges('2026-11-25')).toBe('2026-11-25'); // a business day: itself
    expect(lastDayWithoutCharges('2026-11-28')).toBe('2026-11-30'); // Saturday → Monday
    expect(lastDayWithoutCharges('2026-11-20')).toBe('2026-11-23'); // holiday Friday → Monday
    expect(lastDayWithoutCharges('2026-02-14')).toBe('2026-02-18'); // Carnival Saturday → Wednesday
    expect(lastDayWithoutCharges('2026-04-03')).toBe('2026-04-06'); // Good Friday → Monday
    expect(lastDayWithoutCharges('2028-12-31')).toBe('2029-01-02'); // Sunday, then New Year
    expect(businessDayOnOrAfter('2026-04-18')).toBe('2026-04-20');
  });

  it('refuses dates outside the calendar shipped, and text that is not a date, rather than guess', () => {
    expect(() => isBusinessDay('2071-01-02')).toThrow(/outside the bank calendar/);
    expect(() => isBusinessDay('2026-13-01')).toThrow(/not a date/);
  });
});
