/**
 * The régua de cobrança (contract §17): the partner's schedule of reminders around each row's due
 * date, and when a loan's reminders workflow next has anything to look at. Pure and deterministic —
 * the API validates with it, the reminders workflow and its activities plan with it. Dates are
 * business dates (`YYYY-MM-DD`, America/Sao_Paulo).
 */
import { addDays, daysBetween, startOfBusinessDate } from '../business-date.js';

export const reminderChannels = ['email', 'webhook'] as const;
export type ReminderChannel = (typeof reminderChannels)[number];

/** A step may fall from 10 days before a row's due date to 90 days after it. */
export const MIN_OFFSET_DAYS = -10;
export const MAX_OFFSET_DAYS = 90;
/** More steps than this is a spam schedule, not a régua. */
export const MAX_STEPS = 12;

export interface ReminderStep {
  offset_days: number;
  channels: ReminderChannel[];
}

export const reminderEventType = 'installment.reminder' as const;

/** A row as reminders see it: remindable while unpaid and in a status reminders know. */
export interface ReminderRow {
  number: number;
  due_date: string;
  remindable: boolean;
}

/** Reminders go out at 09:00 in São Paulo on their day: a borrower's morning, never the night. */
const SEND_HOUR_MS = 9 * 3_600_000;

/** The instant (epoch ms) a reminder of business date `date` goes out. */
export const reminderMoment = (date: string): number => startOfBusinessDate(date) + SEND_HOUR_MS;

/**
 * The last business date whose reminder moment has passed at `now` (epoch ms): a workflow started
 * then looks at the dates after it, so a step already past when a loan starts is not sent late.
 */
export function lastPassedReminderDate(now: number): string {
  const today = new Date(now - SEND_HOUR_MS - 3 * 3_600_000).toISOString().slice(0, 10);
  // Off by one only around a zone change São Paulo no longer has; correct it against the moment.
  return reminderMoment(addDays(today, 1)) <= now ? addDays(today, 1) : today;
}

/** The steps due on `date`: each remindable row whose due date plus a step's offset is `date`. */
export function remindersDueOn(
  steps: readonly ReminderStep[],
  rows: readonly ReminderRow[],
  date: string,
): { row: ReminderRow; step: ReminderStep }[] {
  return rows.flatMap((row) =>
    row.remindable
      ? steps
          .filter((step) => daysBetween(row.due_date, date) === step.offset_days)
          .map((step) => ({ row, step }))
      : [],
  );
}

/**
 * The first business date after `after` on which any schedule the contract allows could remind
 * one of these rows: inside some remindable row's window [due − 10, due + 90]. Null when no row
 * has such a date left. Between windows nothing can be due whatever the partner's schedule says,
 * so a workflow sleeps through them; inside one it looks every day, which is how a schedule
 * changed today applies tomorrow to every loan already running.
 */
export function nextReminderCheck(rows: readonly ReminderRow[], after: string): string | null {
  let next: string | null = null;
  const first = addDays(after, 1);
  for (const row of rows) {
    if (!row.remindable) continue;
    const opens = addDays(row.due_date, MIN_OFFSET_DAYS);
    const closes = addDays(row.due_date, MAX_OFFSET_DAYS);
    const candidate = daysBetween(opens, first) > 0 ? first : opens;
    if (daysBetween(candidate, closes) < 0) continue;
    if (next === null || daysBetween(candidate, next) > 0) next = candidate;
  }
  return next;
}

export interface ScheduleProblem {
  path: string;
  code: 'duplicate_offset' | 'duplicate_channel';
  message: string;
}

/** What zod cannot say of a schedule: distinct offsets. Empty when it is sound. */
export function scheduleProblems(steps: readonly ReminderStep[]): ScheduleProblem[] {
  const seen = new Map<number, number>();
  const problems: ScheduleProblem[] = [];
  steps.forEach((step, index) => {
    const earlier = seen.get(step.offset_days);
    if (earlier !== undefined)
      problems.push({
        path: `body.steps.${index}.offset_days`,
        code: 'duplicate_offset',
        message: `offset_days ${step.offset_days} is already step ${earlier}'s; each step needs its own day.`,
      });
    else seen.set(step.offset_days, index);
    if (new Set(step.channels).size !== step.channels.length)
      problems.push({
        path: `body.steps.${index}.channels`,
        code: 'duplicate_channel',
        message: 'Each channel may appear once in a step.',
      });
  });
  return problems;
}

/** The schedule as stored: steps in the order they fall, each channel list in catalogue order. */
export const normalizedSchedule = (steps: readonly ReminderStep[]): ReminderStep[] =>
  [...steps]
    .sort((a, b) => a.offset_days - b.offset_days)
    .map((step) => ({
      offset_days: step.offset_days,
      channels: reminderChannels.filter((channel) => step.channels.includes(channel)),
    }));
