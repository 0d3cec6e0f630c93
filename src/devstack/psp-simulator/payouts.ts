import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { deliverPayout, type ControlContext } from './controls.js';
import { spiId, type Request } from './pix-api.js';
import { notFound, problem, type Answer } from './problems.js';
import type { Payout, PayoutRequest } from './state.js';

/**
 * The payout port (src/psp/payouts/openapi.yaml): one payout per idempotency key, whatever
 * arrives how often. The first request with a key creates it under the current policy; a retry with
 * the same request gets it back (200); the same key with another request is refused (409).
 */
export function postPayout(context: ControlContext, request: Request): Answer {
  const { store } = context;
  const key = request.headers['idempotency-key'] ?? '';
  const body = request.body as PayoutRequest;
  const earlier = store.state.payoutKeys[key];
  if (earlier) {
    if (
      (earlier.client ?? store.startingClient) !== context.client ||
      !isDeepStrictEqual(JSON.parse(earlier.request), body)
    )
      return problem(
        409,
        'ChaveDeIdempotenciaReutilizada',
        'Conflict',
        'This Idempotency-Key was used with another request.',
      );
    const payout = store.state.payouts[earlier.id];
    if (!payout) throw new Error(`payout ${earlier.id} of key ${key} is missing`);
    return { status: 200, body: payout };
  }
  const now = store.now();
  const id = `po_${randomBytes(12).toString('hex')}`;
  const { outcome, failureReason } = store.payoutPolicy(context.client);
  const payout: Payout = {
    id,
    idempotencyKey: key,
    status: outcome,
    amount: body.amount,
    beneficiary: body.beneficiary,
    ...(body.description === undefined ? {} : { description: body.description }),
    ...(outcome === 'confirmed' ? { endToEndId: spiId('E', now) } : {}),
    ...(outcome === 'failed' ? { failureReason: failureReason ?? 'AC03' } : {}),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  store.state.payouts[id] = payout;
  store.state.payoutKeys[key] = { id, request: JSON.stringify(body), client: context.client };
  store.state.payoutClients[id] = context.client;
  store.save();
  // An outcome known at once is notified as a later one would be, after the answer.
  return {
    status: 201,
    body: payout,
    ...(outcome === 'pending' ? {} : { after: () => deliverPayout(context, payout) }),
  };
}

export function getPayout(context: ControlContext, request: Request): Answer {
  const id = request.params.id ?? '';
  const payout = context.store.state.payouts[id];
  return payout && context.store.payoutClient(id) === context.client
    ? { status: 200, body: payout }
    : notFound('NaoEncontrado', request.params.id ?? '');
}
