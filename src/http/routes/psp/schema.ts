import { z } from 'zod';

/**
 * `valor`: reais with two decimals, as Banco Central's Pix API writes it (`\d{1,10}\.\d{2}`):
 * from R$ 0.01 to R$ 9,999,999,999.99. Money received is never refused (contract §14): whatever
 * the scheme allows is stored (as 64-bit centavos) and booked; what a loan does not owe is due
 * back. Zero is not a Pix.
 */
const valor = z
  .string()
  .regex(/^(?:[1-9]\d{0,9}\.\d{2}|0\.(?:0[1-9]|[1-9]\d))$/)
  .meta({ description: 'Reais with two decimals, as the Pix API writes them: `"110.00"`.' });

/** `"110.00"` → 11000: the digits without the point (never a binary float). */
export function reaisToCentavos(valor: string): number {
  return Number.parseInt(valor.replace('.', ''), 10);
}

/**
 * A `horario` names a year of the Pix scheme (it began in November 2020): 2020 or later, as text,
 * so the published schema says exactly what the route takes. A year before names no Pix — a broken
 * notification, answered 422 so the PSP's operators see it (the fuzzer's year 0020 was a 500:
 * stored, then read back as an invalid date).
 */
const PIX_YEAR = /^(?:20[2-9]\d|2[1-9]\d\d|[3-9]\d{3})-/;

/**
 * A devolução of the Pix as the PSP tells of it (the API Pix's `Devolucao`): read to book ours when
 * it settles (contract §16). Loose on purpose — a status or field the service does not know is
 * kept out of the way, never a reason to refuse the Pix it comes with.
 */
const pixDevolucao = z
  .object({
    id: z.string().min(1).max(35).meta({ description: 'The devolução’s id (ours, if we asked).' }),
    rtrId: z.string().max(64).optional().meta({ description: 'The return’s end-to-end id.' }),
    valor: z.string().max(20).optional(),
    horario: z
      .object({
        solicitacao: z.string().max(64).optional(),
        liquidacao: z.string().max(64).optional(),
      })
      .optional(),
    status: z.string().max(40).meta({
      description: '`EM_PROCESSAMENTO`, `DEVOLVIDO` (booked) or `NAO_REALIZADO` (kept as failed).',
    }),
    motivo: z.string().max(1000).optional(),
  })
  .meta({ id: 'ReceivedPixDevolucao' });

/**
 * One Pix received, in the shape of Banco Central's Pix API (`GET /pix/{e2eid}`, the `pix` webhook).
 * Members the PSP adds (`chave`, `infoPagador`, `componentesValor`, …) are accepted and dropped
 * unread (`z.object`, not strict): a notification is never refused for saying more. `devolucoes`
 * is read: the PSP notifies a Pix again when a devolução of it settles (contract §16).
 */
const receivedPix = z
  .object({
    endToEndId: z
      .string()
      .regex(/^[a-zA-Z0-9]{32}$/)
      .meta({ description: 'The payment system’s id of the Pix: `E`, the payer’s ISPB, …' }),
    txid: z
      .string()
      .regex(/^[a-zA-Z0-9]{1,35}$/)
      .optional()
      .meta({ description: 'The charge’s txid, from its BR Code; absent for a Pix to the key.' }),
    valor,
    horario: z.iso
      .datetime({ offset: true })
      .regex(PIX_YEAR, 'Must be in 2020 or later: no Pix was made before.')
      .meta({
        description: 'When the Pix was paid (RFC 3339), in 2020 or later (no Pix was made before).',
      }),
    devolucoes: z.array(pixDevolucao).max(1000).optional().meta({
      description:
        'Its devoluções and their statuses: each the service asked for is booked when `DEVOLVIDO`, kept as failed when `NAO_REALIZADO`, once however often it is told.',
    }),
  })
  .meta({ id: 'ReceivedPix' });

export const pixNotificationBody = z
  .object({
    pix: z.array(receivedPix).min(1).max(1000),
  })
  .meta({ id: 'PixNotification' });

export const pixNotificationReceipt = z
  .object({
    stored: z.int().min(0).meta({ description: 'Pix of this notification stored by it.' }),
    already_stored: z.int().min(0).meta({
      description: 'Pix of it stored before (a repeated notification): nothing changed for them.',
    }),
  })
  .meta({ id: 'PixNotificationReceipt' });

/**
 * One payout's outcome as the PSP notifies it (the payout port's `Payout`,
 * src/psp/payouts/openapi.yaml). Members it adds are accepted and dropped unread.
 */
const notifiedPayout = z
  .object({
    id: z
      .string()
      .regex(/^po_[a-zA-Z0-9]{1,32}$/)
      .meta({ description: 'The PSP’s id of the payout.' }),
    idempotencyKey: z
      .string()
      .regex(/^[\x21-\x7E]{1,255}$/)
      .meta({ description: 'The key the service sent it under: the payout’s id (`pyt_…`).' }),
    status: z.enum(['pending', 'confirmed', 'failed', 'returned']),
    amount: z.int().min(1).max(100_000_000_000).meta({ description: 'Centavos.' }),
    endToEndId: z
      .string()
      .regex(/^[a-zA-Z0-9]{32}$/)
      .optional()
      .meta({
        description:
          'The Pix that carried the money: required of a confirmed or returned payout (422 otherwise).',
      }),
    failureReason: z.string().max(500).optional(),
    returnReason: z.string().max(500).optional(),
    updatedAt: z.iso
      .datetime({ offset: true })
      .meta({ description: 'When its status last changed.' }),
  })
  .superRefine((payout, ctx) => {
    if ((payout.status === 'confirmed' || payout.status === 'returned') && !payout.endToEndId)
      ctx.addIssue({
        code: 'custom',
        path: ['endToEndId'],
        params: { code: 'required' },
        message: 'A confirmed or returned payout names the Pix that carried it.',
      });
  })
  .meta({ id: 'NotifiedPayout' });

export const payoutNotificationBody = z
  .object({ payouts: z.array(notifiedPayout).min(1).max(1000) })
  .meta({ id: 'PayoutNotification' });

export const payoutNotificationReceipt = z
  .object({
    recorded: z.int().min(0).meta({ description: 'Outcomes this notification recorded.' }),
    unchanged: z.int().min(0).meta({
      description: 'Outcomes recorded before (a repeated notification): nothing changed.',
    }),
    unknown: z.int().min(0).meta({
      description: 'Payouts the service never sent: logged for ops, nothing changed.',
    }),
  })
  .meta({ id: 'PayoutNotificationReceipt' });
