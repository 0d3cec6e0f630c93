import { z } from 'zod';
import {
  discrepancyActions,
  discrepancyKinds,
  reconciliationStatuses,
} from '../../../domain/reconciliation/report.js';

export const reconciliationParams = z.object({
  date: z.string().meta({
    description:
      'The business date (São Paulo), `YYYY-MM-DD`: from 2020-11-03 (Pix’s first day) to today. Another value is a 422.',
  }),
});

const sideTotal = z
  .object({
    count: z.int().meta({ description: 'How many.' }),
    amount: z.int().meta({ description: 'Centavos.' }),
  })
  .nullable();

const sides = (what: string) =>
  z.object({
    psp: sideTotal.meta({ description: `${what} as the PSP lists them (null before a run).` }),
    booked: sideTotal.meta({ description: `${what} as the service booked them.` }),
  });

const discrepancySchema = z
  .object({
    kind: z.enum(discrepancyKinds).meta({
      description:
        '`missing_notification`: the PSP received a Pix no notification brought (booked by the run); `unknown_to_psp`: a Pix the service holds that the PSP does not list; `amount_mismatch`: one end-to-end id, two amounts; `not_booked`: held with no ledger entry yet; `devolucao_*`, `payout_*`: the same for devolucoes and payouts; `clearing_mismatch`: `collections_clearing`’s Pix debits of the day differ from the PSP’s total.',
    }),
    end_to_end_id: z.string().nullable().meta({ description: 'The Pix concerned.' }),
    reference: z
      .string()
      .nullable()
      .meta({ description: 'The devolucao’s or payout’s id; the account of a clearing mismatch.' }),
    psp_amount: z.int().nullable().meta({ description: 'Centavos at the PSP (null: none).' }),
    booked_amount: z.int().nullable().meta({ description: 'Centavos booked (null: none).' }),
    action: z.enum(discrepancyActions).meta({
      description:
        'What the run did: `booked_missing_notification` (stored and booked, exactly once), or `none` (for ops).',
    }),
  })
  .meta({ id: 'ReconciliationDiscrepancy' });

export const reconciliationSchema = z
  .object({
    date: z.iso.date(),
    status: z.enum(reconciliationStatuses).meta({
      description:
        '`running` while a run goes (the last figures shown meanwhile); `matched`: every discrepancy was acted on; `discrepancies`: some wait for ops; `failed`: the PSP refused the run (`failure` says why).',
    }),
    runs: z.int().meta({ description: 'Runs of this date so far (the schedule’s and ops’).' }),
    requested_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable().meta({ description: 'When the last run wrote it.' }),
    failure: z.string().nullable(),
    currency: z.literal('BRL'),
    pix: sides('Pix received within the day'),
    devolucoes: sides('Devolucoes settled within the day'),
    payouts: sides('Payouts settled within the day')
      .nullable()
      .meta({ description: 'Null in a report written before payouts were compared.' }),
    clearing: z.object({
      collections_clearing: z.object({
        debits: z.int().nullable().meta({ description: 'Its debits of the day (production).' }),
        pix_debits: z
          .int()
          .nullable()
          .meta({ description: 'The part posted for the PSP’s Pix: equal to `psp_received`.' }),
        psp_received: z.int().nullable().meta({ description: 'The PSP’s received total.' }),
      }),
      disbursement_clearing: z.object({
        credits: z
          .int()
          .nullable()
          .meta({ description: 'Its credits of the day: money sent (disbursements, refunds).' }),
      }),
    }),
    discrepancy_counts: z
      .record(z.enum(discrepancyKinds), z.int())
      .meta({ description: 'Discrepancies by kind, every kind named.' }),
    discrepancies: z.array(discrepancySchema).meta({ description: 'The first 1,000, by kind.' }),
    has_more_discrepancies: z.boolean(),
  })
  .meta({ id: 'ReconciliationReport' });

export const reconciliationRunSchema = z
  .object({
    date: z.iso.date(),
    status: z.literal('running'),
    run: z.int().meta({ description: 'This run’s number for the date.' }),
    workflow_id: z.string().meta({ description: 'The run’s workflow, in Temporal.' }),
  })
  .meta({ id: 'ReconciliationRun' });
