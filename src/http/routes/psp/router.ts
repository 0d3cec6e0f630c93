import { recordDevolucaoNotices } from '../../../commands/devolucoes.js';
import { receivePayoutOutcomes } from '../../../commands/receive-payouts.js';
import { receivePix, type ReceivePixDeps } from '../../../commands/receive-pix.js';
import type { SigningUrl } from '../../../presenters/loans.js';
import type { ApiRouter } from '../../api-router.js';
import {
  payoutNotificationBody,
  payoutNotificationReceipt,
  pixNotificationBody,
  pixNotificationReceipt,
  reaisToCentavos,
} from './schema.js';

/**
 * `POST /psp/v1/pix`: the PSP tells us of Pix received to the lender's key (contract §14). Answered
 * 200 once every Pix of the body is stored with the workflow that books it; a Pix told again
 * stores nothing, so the PSP may retry until it reads a 200.
 */
export function pspRoutes(api: ApiRouter, deps: ReceivePixDeps & { signingUrl: SigningUrl }): void {
  api.add(
    {
      method: 'post',
      path: '/pix',
      operationId: 'receivePix',
      summary: 'Pix received',
      description:
        'The PSP’s notification of Pix received, in the shape of Banco Central’s Pix API webhook. Signed: `Pix-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with PSP_WEBHOOK_SECRET>`, within 5 minutes of now (or, with PSP_WEBHOOK_AUTH=mtls, the verified client certificate the proxy in front names in its headers, on a connection from that proxy); anything else is a 401 and stores nothing. Answered 200 once every Pix is stored: each is booked once to the charge its `txid` names, however often it is notified; one that names no charge is kept for ops (`GET /ops/v1/unmatched-pix`). The PSP notifies a Pix again when a devolução of it settles: each devolução the service asked for is booked once `DEVOLVIDO` (a `refund` transaction) or kept as failed once `NAO_REALIZADO`, however often it is told.',
      tag: 'Pix',
      security: 'psp',
      body: pixNotificationBody,
      bodyType: 'signed-json',
      responses: {
        200: { description: 'Every Pix is stored.', schema: pixNotificationReceipt },
      },
    },
    async (ctx, { body }) => {
      const pixes = body.pix.map((pix) => ({
        endToEndId: pix.endToEndId,
        txid: pix.txid ?? null,
        amount: reaisToCentavos(pix.valor),
        paidAt: new Date(pix.horario),
      }));
      const stored = await receivePix(deps, 'production', 'psp', pixes);
      // A Pix told again with its devoluções: each of ours that settled is booked (contract §16).
      for (const pix of body.pix)
        if (pix.devolucoes?.length)
          await recordDevolucaoNotices(
            deps,
            pix.endToEndId,
            pix.devolucoes.map((devolucao) => ({
              id: devolucao.id,
              status: devolucao.status,
              rtrId: devolucao.rtrId,
              motivo: devolucao.motivo,
              liquidacao: devolucao.horario?.liquidacao,
            })),
          );
      const told = new Set(pixes.map((pix) => pix.endToEndId)).size;
      ctx.body = { stored: stored.length, already_stored: told - stored.length };
    },
  );

  // Payout outcomes (contract §16; the disbursement part of issue 38).
  api.add(
    {
      method: 'post',
      path: '/payouts',
      operationId: 'receivePayoutOutcomes',
      summary: 'Payout outcomes',
      description:
        'The PSP’s notification of payouts’ outcomes (the payout port’s `PayoutNotification`: `confirmed` with the end-to-end id, `failed` with a reason, `returned` after a confirmation). Authenticated as `POST /psp/v1/pix` is (the `Pix-Signature` header, or the proxy’s verified client certificate under PSP_WEBHOOK_AUTH=mtls); anything else is a 401 and records nothing. Answered 200 once every outcome is recorded on the payout its `idempotencyKey` names and the loan told: `confirmed` activates a production loan, `failed` ends it in `error` (`disbursement_failed`), `returned` cancels an active one (`payout_returned`). A repeated notification changes nothing; a payout the service never sent is counted as `unknown` and logged.',
      tag: 'Pix',
      security: 'psp',
      body: payoutNotificationBody,
      bodyType: 'signed-json',
      responses: {
        200: { description: 'Every outcome is recorded.', schema: payoutNotificationReceipt },
      },
    },
    async (ctx, { body }) => {
      ctx.body = await receivePayoutOutcomes(
        deps,
        body.payouts.map((payout) => ({
          idempotencyKey: payout.idempotencyKey,
          status: payout.status,
          pspPayoutId: payout.id,
          endToEndId: payout.endToEndId,
          failureReason: payout.failureReason,
          returnReason: payout.returnReason,
          at: payout.updatedAt,
        })),
      );
    },
  );
}
