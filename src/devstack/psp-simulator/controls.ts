import type { ValidateFunction } from 'ajv';
import { signPspBody } from '../../domain/pix/psp-signature.js';
import { centavosOf, valorOf } from '../../psp/valor.js';
import { cobvValueOn } from './cobv-value.js';
import { payable, spiId, today, type PixApiContext } from './pix-api.js';
import type { Answer } from './problems.js';
import type {
  ClientAccount,
  Fault,
  NotificationTarget,
  Payout,
  Pix,
  PayoutPolicy,
} from './state.js';

/**
 * Routes under `/_simulator/` that tests and developers use to play the other side of the PSP:
 * a payer paying a charge, the SPI failing or returning a payout, a devolucao refused, a
 * notification lost or sent twice, the clock moving on. Not part of any PSP's API; plain JSON.
 */
export interface ControlContext extends PixApiContext {
  /**
   * Where a client's notifications go: its Pix (the service's `POST /psp/v1/pix`) and its payout
   * outcomes (`PayoutNotification` of the payout port), each with the secret it is signed with.
   * A charge's or a payout's notification goes to the client that made it.
   */
  targets(client: string): { notify?: NotificationTarget; notifyPayouts?: NotificationTarget };
  /** The documents' checks of what is notified (`WebhookPixBody`, `PayoutNotification`). */
  notificationSchemas: { pix: ValidateFunction; payouts: ValidateFunction };
}

const error = (status: number, detail: string): Answer => ({
  status,
  body: { title: 'Simulator control refused', status, detail },
});

/** POSTs a notification, signed as §14 says, once the document's schema has checked it. */
async function post(
  target: NotificationTarget | undefined,
  schema: ValidateFunction,
  notification: object,
): Promise<number | null> {
  if (!target) return null;
  if (!schema(notification))
    throw new Error(
      `the simulator's notification breaks the document: ${JSON.stringify(schema.errors)}`,
    );
  const body = JSON.stringify(notification);
  const response = await fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'pix-signature': signPspBody(target.secret, body, Math.floor(Date.now() / 1000)),
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

const deliver = (context: ControlContext, pix: Pix) =>
  post(
    context.targets(context.store.chargeClient(pix.txid)).notify,
    context.notificationSchemas.pix,
    { pix: [pix] },
  );

export const deliverPayout = (context: ControlContext, payout: Payout) =>
  post(
    context.targets(context.store.payoutClient(payout.id)).notifyPayouts,
    context.notificationSchemas.payouts,
    { payouts: [payout] },
  );

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * A notification target given to a control: an http(s) URL on this machine, its secret 16
 * characters or more. The simulator is a development tool: it posts to loopback only, whatever
 * a caller asks, and says so before any connection is opened.
 */
function notificationTarget(value: unknown, name: string): NotificationTarget | string {
  if (typeof value !== 'object' || value === null) return `${name}: {url, secret}`;
  const { url, secret } = value as Record<string, unknown>;
  if (typeof url !== 'string' || !URL.canParse(url)) return `${name}.url: a URL`;
  const parsed = new URL(url);
  if (!['http:', 'https:'].includes(parsed.protocol) || !LOOPBACK_HOSTS.test(parsed.hostname))
    return `${name}.url: http(s) on loopback only (localhost, 127.0.0.0/8, [::1])`;
  if (typeof secret !== 'string' || secret.length < 16)
    return `${name}.secret: 16 characters or more`;
  return { url, secret };
}

/** The account a control names by `client` (the starting client when absent), or why not. */
const clientNamed = (context: ControlContext, client: unknown): string | Answer => {
  if (client === undefined || client === context.store.startingClient)
    return context.store.startingClient;
  if (typeof client === 'string' && context.store.state.clients[client]) return client;
  return error(404, `no client ${JSON.stringify(client)}`);
};

type Route = (
  context: ControlContext,
  match: string[],
  body: Record<string, unknown>,
) => Promise<Answer>;

const routes: { method: string; path: RegExp; run: Route }[] = [
  {
    // A payer pays the charge: {valor?, notify?: false to drop the notification}. Without a
    // valor, what the charge asks that day: a cobv's original, plus its multa and juros once its
    // due date has passed (`componentesValor` says which).
    method: 'POST',
    path: /^\/_simulator\/charges\/([A-Za-z0-9]{26,35})\/pay$/,
    run: async (context, [txid = ''], body) => {
      const { store } = context;
      const charge = store.state.cobs[txid];
      if (!charge) return error(404, `no charge ${txid}`);
      const now = store.now();
      const check = payable(charge, now);
      if (!check.ok) return error(409, `${txid} cannot be paid: ${check.reason}`);
      const asked =
        charge.kind === 'cobv'
          ? cobvValueOn(charge.record, today(now))
          : charge.record.valor.original === undefined
            ? undefined
            : {
                total: centavosOf(charge.record.valor.original),
                componentes: { original: { valor: charge.record.valor.original } },
              };
      const valor =
        typeof body.valor === 'string'
          ? valorOf(centavosOf(body.valor))
          : asked && valorOf(asked.total);
      if (valor === undefined) return error(409, `${txid} has no amount; say valor`);
      const pix: Pix = {
        endToEndId: spiId('E', now),
        txid,
        valor,
        horario: now.toISOString(),
        // The amount's parts, when the payer paid what the charge asked.
        ...(asked && valor === valorOf(asked.total) ? { componentesValor: asked.componentes } : {}),
      };
      store.state.pix[pix.endToEndId] = pix;
      charge.record.status = 'CONCLUIDA';
      charge.record.pix = [...(charge.record.pix ?? []), pix];
      store.save();
      const notified = body.notify === false ? 'dropped' : await deliver(context, pix);
      return { status: 201, body: { pix, notified } };
    },
  },
  {
    // Pix paid to the starting client's key with no charge, in bulk, never notified (a bench's
    // day of Pix): {pix: [{valor, horario}]}, up to 10,000 a call, one write of the state.
    method: 'POST',
    path: /^\/_simulator\/pix$/,
    run: (context, _match, body) => {
      const given = body.pix;
      if (!Array.isArray(given) || given.length === 0 || given.length > 10_000)
        return Promise.resolve(error(400, 'pix: 1 to 10,000 of {valor, horario}'));
      const made: Pix[] = [];
      for (const [index, item] of (given as unknown[]).entries()) {
        const { valor, horario } = (item ?? {}) as Record<string, unknown>;
        const at = typeof horario === 'string' ? new Date(horario) : undefined;
        if (typeof valor !== 'string' || !/^\d{1,10}\.\d{2}$/.test(valor) || valor === '0.00')
          return Promise.resolve(error(400, `pix[${index}].valor: reais with two decimals, > 0`));
        if (!at || Number.isNaN(at.getTime()))
          return Promise.resolve(error(400, `pix[${index}].horario: a date-time`));
        made.push({ endToEndId: spiId('E', at), valor, horario: at.toISOString() });
      }
      for (const pix of made) context.store.state.pix[pix.endToEndId] = pix;
      context.store.save();
      return Promise.resolve({
        status: 201,
        body: { received: made.length, endToEndIds: made.map((pix) => pix.endToEndId) },
      });
    },
  },
  {
    // The PSP notifies a Pix again (a duplicate delivery).
    method: 'POST',
    path: /^\/_simulator\/pix\/([A-Za-z0-9]{32})\/notify$/,
    run: async (context, [e2eid = '']) => {
      const pix = context.store.state.pix[e2eid];
      if (!pix) return error(404, `no Pix ${e2eid}`);
      return { status: 200, body: { pix, notified: await deliver(context, pix) } };
    },
  },
  {
    // The SPI settles or refuses a devolucao: {status: 'DEVOLVIDO' | 'NAO_REALIZADO', motivo?,
    // notify?: false}. A final status is notified with its Pix, as the API Pix's callback says.
    method: 'POST',
    path: /^\/_simulator\/pix\/([A-Za-z0-9]{32})\/devolucao\/([A-Za-z0-9]{1,35})\/outcome$/,
    run: async (context, [e2eid = '', id = ''], body) => {
      const { store } = context;
      const pix = store.state.pix[e2eid];
      const devolucao = pix?.devolucoes?.find((d) => d.id === id);
      if (!pix || !devolucao) return error(404, `no devolucao ${e2eid}/${id}`);
      if (devolucao.status !== 'EM_PROCESSAMENTO')
        return error(409, `devolucao ${id} is already ${devolucao.status}`);
      if (body.status === 'DEVOLVIDO') {
        devolucao.status = 'DEVOLVIDO';
        devolucao.horario = { ...devolucao.horario, liquidacao: store.now().toISOString() };
      } else if (body.status === 'NAO_REALIZADO') {
        devolucao.status = 'NAO_REALIZADO';
        devolucao.motivo =
          typeof body.motivo === 'string' ? body.motivo : 'Conta do pagador encerrada';
      } else return error(400, 'status: DEVOLVIDO or NAO_REALIZADO');
      store.save();
      const notified = body.notify === false ? 'dropped' : await deliver(context, pix);
      return { status: 200, body: { devolucao, notified } };
    },
  },
  {
    // Registers a client (an account of its own: a test file's stack, say) or changes one:
    // {secret, notify?: {url, secret}, notifyPayouts?: {url, secret}}. Its charges' Pix and its
    // payouts' outcomes are notified to its own URLs; it sees only its own charges, Pix and payouts.
    method: 'PUT',
    path: /^\/_simulator\/clients\/([A-Za-z0-9._-]{1,64})$/,
    run: (context, [id = ''], body) => {
      if (id === context.store.startingClient)
        return Promise.resolve(error(409, `${id} is the simulator's starting client`));
      if (typeof body.secret !== 'string' || body.secret.length < 16)
        return Promise.resolve(error(400, 'secret: 16 characters or more'));
      const account: ClientAccount = { secret: body.secret };
      for (const name of ['notify', 'notifyPayouts'] as const) {
        if (body[name] === undefined) continue;
        const target = notificationTarget(body[name], name);
        if (typeof target === 'string') return Promise.resolve(error(400, target));
        account[name] = target;
      }
      const earlier = context.store.state.clients[id];
      if (earlier?.payoutPolicy) account.payoutPolicy = earlier.payoutPolicy;
      context.store.state.clients[id] = account;
      context.store.save();
      return Promise.resolve({
        status: earlier ? 200 : 201,
        body: {
          id,
          ...(account.notify ? { notify: account.notify.url } : {}),
          ...(account.notifyPayouts ? { notifyPayouts: account.notifyPayouts.url } : {}),
        },
      });
    },
  },
  {
    // What the next payouts of a client (`client`, else the starting one) do:
    // {outcome: 'confirmed' | 'pending' (delayed) | 'failed', failureReason?, client?}.
    method: 'PUT',
    path: /^\/_simulator\/payouts\/policy$/,
    run: (context, _match, body) => {
      const outcome = body.outcome;
      if (outcome !== 'confirmed' && outcome !== 'pending' && outcome !== 'failed')
        return Promise.resolve(error(400, 'outcome: confirmed, pending or failed'));
      const client = clientNamed(context, body.client);
      if (typeof client !== 'string') return Promise.resolve(client);
      const policy: PayoutPolicy = {
        outcome,
        ...(typeof body.failureReason === 'string' ? { failureReason: body.failureReason } : {}),
      };
      const account = context.store.state.clients[client];
      if (account) account.payoutPolicy = policy;
      else context.store.state.payoutPolicy = policy;
      context.store.save();
      return Promise.resolve({ status: 200, body: policy });
    },
  },
  {
    // A pending payout settles (confirm) or fails; a confirmed one comes back (return). Each is
    // notified unless {notify: false} drops it.
    method: 'POST',
    path: /^\/_simulator\/payouts\/(po_[a-zA-Z0-9]+)\/(confirm|fail|return)$/,
    run: async (context, [id = '', action = ''], body) => {
      const { store } = context;
      const payout = store.state.payouts[id];
      if (!payout) return error(404, `no payout ${id}`);
      const from = action === 'return' ? 'confirmed' : 'pending';
      if (payout.status !== from)
        return error(409, `payout ${id} is ${payout.status}, not ${from}`);
      const now = store.now();
      const reason = typeof body.reason === 'string' ? body.reason : undefined;
      if (action === 'confirm') {
        payout.status = 'confirmed';
        payout.endToEndId = spiId('E', now);
      } else if (action === 'fail') {
        payout.status = 'failed';
        payout.failureReason = reason ?? 'AC03';
      } else {
        payout.status = 'returned';
        payout.returnReason = reason ?? 'AC06';
      }
      payout.updatedAt = now.toISOString();
      store.save();
      const notified = body.notify === false ? 'dropped' : await deliverPayout(context, payout);
      return { status: 200, body: { payout, notified } };
    },
  },
  {
    // The PSP notifies a payout's outcome again (a duplicate delivery).
    method: 'POST',
    path: /^\/_simulator\/payouts\/(po_[a-zA-Z0-9]+)\/notify$/,
    run: async (context, [id = '']) => {
      const payout = context.store.state.payouts[id];
      if (!payout) return error(404, `no payout ${id}`);
      if (payout.status === 'pending') return error(409, `payout ${id} has no outcome yet`);
      return { status: 200, body: { payout, notified: await deliverPayout(context, payout) } };
    },
  },
  {
    // Every payout of an account (`client`: a registered client, or the starting one), oldest
    // first: what a test counts to see one payout per claim, whatever was retried.
    method: 'GET',
    path: /^\/_simulator\/clients\/([A-Za-z0-9._-]{1,64})\/payouts$/,
    run: (context, [id = '']) => {
      const client = clientNamed(context, id);
      if (typeof client !== 'string') return Promise.resolve(client);
      const payouts = Object.values(context.store.state.payouts)
        .filter((payout) => context.store.payoutClient(payout.id) === client)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      return Promise.resolve({ status: 200, body: { payouts } });
    },
  },
  {
    // The PSP fails a client's next calls (`client`, else the starting one): {status: 400–599,
    // count? (1), method?, path? (a prefix: '/cob' covers cob and cobv)}; added to any set before.
    // `POST /_simulator/faults/clear {client?}` clears them.
    method: 'POST',
    path: /^\/_simulator\/faults$/,
    run: (context, _match, body) => {
      const client = clientNamed(context, body.client);
      if (typeof client !== 'string') return Promise.resolve(client);
      const { status, count = 1, method, path } = body;
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599)
        return Promise.resolve(error(400, 'status: an HTTP error status, 400 to 599'));
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000)
        return Promise.resolve(error(400, 'count: 1 to 1000'));
      if (method !== undefined && (typeof method !== 'string' || !/^[A-Z]+$/.test(method)))
        return Promise.resolve(error(400, 'method: an HTTP method, upper case'));
      if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/')))
        return Promise.resolve(error(400, 'path: a path prefix, from /'));
      const fault: Fault = {
        status,
        remaining: count,
        ...(method === undefined ? {} : { method }),
        ...(path === undefined ? {} : { path }),
      };
      const { faults } = context.store.state;
      faults[client] = [...(faults[client] ?? []), fault];
      context.store.save();
      return Promise.resolve({ status: 200, body: { client, faults: faults[client] } });
    },
  },
  {
    method: 'POST',
    path: /^\/_simulator\/faults\/clear$/,
    run: (context, _match, body) => {
      const client = clientNamed(context, body.client);
      if (typeof client !== 'string') return Promise.resolve(client);
      delete context.store.state.faults[client];
      context.store.save();
      return Promise.resolve({ status: 200, body: { client, faults: [] } });
    },
  },
  {
    // Moves the simulator's clock, every client's: {advanceSeconds}. (A simulator many test files
    // share is never moved: expiry there is tested with a short `expiracao`.)
    method: 'POST',
    path: /^\/_simulator\/clock$/,
    run: (context, _match, body) => {
      const seconds = body.advanceSeconds;
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)
        return Promise.resolve(error(400, 'advanceSeconds: a number of seconds, >= 0'));
      context.store.state.clockOffsetMs += seconds * 1000;
      context.store.save();
      return Promise.resolve({ status: 200, body: { now: context.store.now().toISOString() } });
    },
  },
];

export function control(
  context: ControlContext,
  method: string,
  path: string,
  body: Record<string, unknown>,
): Promise<Answer> {
  for (const route of routes) {
    const match = route.method === method ? route.path.exec(path) : null;
    if (match) return route.run(context, match.slice(1), body);
  }
  return Promise.resolve(error(404, `no control ${method} ${path}`));
}
