import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/domain/business-date.js';
import { parseKeyRing } from '../../src/domain/key-ring.js';
import { customerIdOfOptOutToken, optOutToken } from '../../src/domain/reminders/opt-out-token.js';
import {
  lastPassedReminderDate,
  MAX_OFFSET_DAYS,
  MIN_OFFSET_DAYS,
  nextReminderCheck,
  normalizedSchedule,
  reminderMoment,
  remindersDueOn,
  scheduleProblems,
  type ReminderRow,
  type ReminderStep,
} from '../../src/domain/reminders/schedule.js';
import { reminderMessage } from '../../src/mail/reminder-mail.js';

const row = (number: number, due_date: string, remindable = true): ReminderRow => ({
  number,
  due_date,
  remindable,
});

describe('when a loan’s reminders next look (contract §17)', () => {
  const rows = [row(1, '2027-01-10'), row(2, '2027-02-10'), row(3, '2027-03-10')];

  it('sleeps until 10 days before the first unpaid row, then looks daily inside its window', () => {
    expect(nextReminderCheck(rows, '2026-12-15')).toBe('2026-12-31');
    expect(nextReminderCheck(rows, '2026-12-31')).toBe('2027-01-01');
    expect(nextReminderCheck(rows, '2027-01-09')).toBe('2027-01-10');
  });

  it('skips paid or unknown rows, and ends 90 days after the last unpaid row’s due date', () => {
    const paidFirst = [row(1, '2027-01-10', false), ...rows.slice(1)];
    expect(nextReminderCheck(paidFirst, '2026-12-15')).toBe('2027-01-31');
    expect(nextReminderCheck([row(1, '2027-01-10')], '2027-04-09')).toBe('2027-04-10');
    expect(nextReminderCheck([row(1, '2027-01-10')], '2027-04-10')).toBeNull();
    expect(nextReminderCheck([row(1, '2027-01-10', false)], '2026-12-01')).toBeNull();
  });

  it('never skips a date on which any allowed step could remind an unpaid row (property)', () => {
    const date = fc.integer({ min: 0, max: 400 }).map((days) => addDays('2027-01-01', days));
    fc.assert(
      fc.property(
        fc.array(fc.record({ due: date, remindable: fc.boolean() }), {
          minLength: 1,
          maxLength: 6,
        }),
        date,
        (specs, after) => {
          const rs = specs.map((spec, index) => row(index + 1, spec.due, spec.remindable));
          const next = nextReminderCheck(rs, after);
          // Every date strictly between `after` and `next` is outside every remindable window.
          const horizon = next ?? addDays(after, 600);
          for (let d = addDays(after, 1); daysBetween(d, horizon) > 0; d = addDays(d, 1))
            for (const r of rs.filter((x) => x.remindable)) {
              const offset = daysBetween(r.due_date, d);
              expect(offset < MIN_OFFSET_DAYS || offset > MAX_OFFSET_DAYS).toBe(true);
            }
          if (next !== null) {
            expect(daysBetween(after, next)).toBeGreaterThan(0);
            expect(
              rs.some((r) => {
                const offset = daysBetween(r.due_date, next);
                return r.remindable && offset >= MIN_OFFSET_DAYS && offset <= MAX_OFFSET_DAYS;
              }),
            ).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('sends at 09:00 in São Paulo, and a workflow started after that looks from the next day', () => {
    expect(new Date(reminderMoment('2027-01-07')).toISOString()).toBe('2027-01-07T12:00:00.000Z');
    expect(lastPassedReminderDate(Date.parse('2027-01-07T11:59:59Z'))).toBe('2027-01-06');
    expect(lastPassedReminderDate(Date.parse('2027-01-07T12:00:00Z'))).toBe('2027-01-07');
    expect(lastPassedReminderDate(Date.parse('2027-01-08T02:59:00Z'))).toBe('2027-01-07');
  });
});

describe('which reminders a day holds', () => {
  const steps: ReminderStep[] = [
    { offset_days: -3, channels: ['email', 'webhook'] },
    { offset_days: 1, channels: ['email'] },
  ];
  const rows = [row(1, '2027-01-10'), row(2, '2027-01-13'), row(3, '2027-02-10', false)];

  it('pairs each remindable row with the step whose offset lands on the day', () => {
    expect(remindersDueOn(steps, rows, '2027-01-07').map((due) => due.row.number)).toEqual([1]);
    const eleventh = remindersDueOn(steps, rows, '2027-01-11');
    expect(eleventh.map((due) => [due.row.number, due.step.offset_days])).toEqual([[1, 1]]);
    expect(remindersDueOn(steps, rows, '2027-02-07')).toEqual([]); // row 3 is not remindable
    expect(remindersDueOn([], rows, '2027-01-07')).toEqual([]);
  });
});

describe('a schedule’s own rules', () => {
  it('names each step on a day taken and each channel twice; orders steps and channels', () => {
    expect(
      scheduleProblems([
        { offset_days: 1, channels: ['email'] },
        { offset_days: 1, channels: ['webhook', 'webhook'] },
      ]).map((problem) => [problem.path, problem.code]),
    ).toEqual([
      ['body.steps.1.offset_days', 'duplicate_offset'],
      ['body.steps.1.channels', 'duplicate_channel'],
    ]);
    expect(scheduleProblems([{ offset_days: -3, channels: ['email', 'webhook'] }])).toEqual([]);
    expect(
      normalizedSchedule([
        { offset_days: 5, channels: ['webhook', 'email'] },
        { offset_days: -10, channels: ['email'] },
      ]),
    ).toEqual([
      { offset_days: -10, channels: ['email'] },
      { offset_days: 5, channels: ['email', 'webhook'] },
    ]);
  });
});

describe('the opt-out link', () => {
  const ring = parseKeyRing('k1:' + 'a'.repeat(43) + ',k0:' + 'b'.repeat(43)).ring!;
  const customer = `cust_${'1'.repeat(32)}`;

  it('opens its customer’s opt-out only, and nothing once altered', () => {
    const token = optOutToken(ring, customer);
    expect(customerIdOfOptOutToken(ring, token)).toBe(customer);
    expect(
      customerIdOfOptOutToken(
        ring,
        token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      ),
    ).toBeUndefined();
    expect(customerIdOfOptOutToken(ring, token.replace('1', '2'))).toBeUndefined();
    expect(customerIdOfOptOutToken(ring, 'cust_x.k1.abc')).toBeUndefined();
  });

  it('rides in every reminder e-mail, beside the amount and the Pix code, in Portuguese', () => {
    const message = reminderMessage({
      to: 'ana@example.test',
      customerName: 'Ana Souza',
      installmentNumber: 2,
      dueDate: '2027-01-10',
      date: '2027-01-12',
      amountDue: 123456,
      brCode: '000201…6304ABCD',
      optOutUrl: 'https://credito.test/hosted/reminders/t',
      messageId: '<rmd_1@reminders.embedded-credit>',
    });
    expect(message.subject).toBe('Lembrete: parcela 2 de R$ 1.234,56 (vencimento 10/01/2027)');
    expect(message.text).toContain('Olá, Ana.');
    expect(message.text).toContain('venceu em 10/01/2027 e está em atraso há 2 dias');
    expect(message.text).toContain('R$ 1.234,56 (com multa e juros de atraso)');
    expect(message.text).toContain('000201…6304ABCD');
    expect(message.text).toContain('https://credito.test/hosted/reminders/t');
    expect(message.headers).toEqual({
      'List-Unsubscribe': '<https://credito.test/hosted/reminders/t>',
    });
  });
});
