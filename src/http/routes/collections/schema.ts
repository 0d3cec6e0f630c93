import { z } from 'zod';
import {
  MAX_OFFSET_DAYS,
  MAX_STEPS,
  MIN_OFFSET_DAYS,
  reminderChannels,
} from '../../../domain/reminders/schedule.js';
import { idField } from '../../ids.js';

const step = z
  .strictObject({
    offset_days: z
      .int()
      .min(MIN_OFFSET_DAYS)
      .max(MAX_OFFSET_DAYS)
      .meta({
        description: `Days from the installment’s due date: negative before it, 0 on it, positive after it (${MIN_OFFSET_DAYS}…${MAX_OFFSET_DAYS}). Each step its own day.`,
        example: -3,
      }),
    channels: z
      .array(z.enum(reminderChannels))
      .min(1)
      .max(reminderChannels.length)
      .meta({
        description:
          '`email`: the borrower gets an e-mail in Portuguese with the amount due that day, a Pix “copia e cola” of a charge made (or reused) for it, and a one-click opt-out link. `webhook`: you get the event `installment.reminder`. Each channel once.',
        example: ['email', 'webhook'],
      }),
  })
  .meta({ id: 'ReminderStep' });

export const putScheduleBody = z
  .strictObject({
    steps: z
      .array(step)
      .max(MAX_STEPS)
      .meta({ description: `At most ${MAX_STEPS} steps; empty: no reminders.` }),
  })
  .meta({ id: 'CollectionScheduleInput' });

export const collectionScheduleSchema = z
  .object({
    steps: z.array(step).meta({ description: 'The steps, in the order they fall.' }),
    updated_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When the schedule was last set (null: never; no reminders).' }),
  })
  .meta({ id: 'CollectionSchedule' });

/** `installment.reminder`'s data (contract §17). */
export const installmentReminderSchema = z
  .object({
    loan_id: idField('ln'),
    customer_id: idField('cust'),
    offset_days: z.int().meta({ description: 'The step’s offset from the due date.' }),
    channels: z
      .array(z.enum(reminderChannels))
      .meta({ description: 'The step’s channels as the schedule had them.' }),
    installment: z
      .object({
        number: z.int().min(1).meta({ description: 'The installment’s number.' }),
        due_date: z.iso.date().meta({ description: 'Its due date.' }),
        amount_due: z.int().min(0).meta({
          description:
            'What it asks for on the reminder’s day, late charges included after the due date (centavos).',
        }),
      })
      .meta({ description: 'The installment reminded of.' }),
    charge: z
      .object({
        id: idField('chg'),
        br_code: z.string().meta({ description: 'The charge’s Pix “copia e cola”.' }),
      })
      .nullable()
      .meta({
        description: 'The charge the e-mail carried (made or reused), when the step e-mailed.',
      }),
  })
  .meta({ id: 'InstallmentReminderData' });
