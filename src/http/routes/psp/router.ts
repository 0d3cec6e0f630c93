import { recordDevolucaoNotices } from '../../../commands/devolucoes.js';
import { receivePix, type ReceivePixDeps } from '../../../commands/receive-pix.js';
import type { SigningUrl } from '../../../presenters/loans.js';
import type { ApiRouter } from '../../api-router.js';
import { pixNotificationBody, pixNotificationReceipt, reaisToCentavos } from './schema.js';

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
}
