import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { loadContracts, notificationValidators, violations, type Contract } from './contract.js';
import { control, type ControlContext } from './controls.js';
import { getPayout, postPayout } from './payouts.js';
import {
  getCharge,
  getDevolucao,
  listPix,
  patchCharge,
  putCob,
  putCobV,
  putDevolucao,
  type Receiver,
  type Request,
} from './pix-api.js';
import { invalid, problem, type Answer } from './problems.js';
import { StateFile } from './state.js';

type Handler = (context: ControlContext, request: Request) => Answer;

/** The subset of the API Pix (and the payout port) the simulator implements, by operation. */
const handlers: Record<string, { handler: Handler; invalidType: string }> = {
  'put /cob/{txid}': { handler: putCob, invalidType: 'CobOperacaoInvalida' },
  'patch /cob/{txid}': { handler: patchCharge('cob'), invalidType: 'CobOperacaoInvalida' },
  'get /cob/{txid}': { handler: getCharge('cob'), invalidType: 'CobConsultaInvalida' },
  'put /cobv/{txid}': { handler: putCobV, invalidType: 'CobVOperacaoInvalida' },
  'patch /cobv/{txid}': { handler: patchCharge('cobv'), invalidType: 'CobVOperacaoInvalida' },
  'get /cobv/{txid}': { handler: getCharge('cobv'), invalidType: 'CobVConsultaInvalida' },
  'get /pix': { handler: listPix, invalidType: 'PixConsultaInvalida' },
  'put /pix/{e2eid}/devolucao/{id}': { handler: putDevolucao, invalidType: 'PixDevolucaoInvalida' },
  'get /pix/{e2eid}/devolucao/{id}': { handler: getDevolucao, invalidType: 'RequisicaoInvalida' },
  'post /payouts': { handler: postPayout, invalidType: 'RequisicaoInvalida' },
  'get /payouts/{id}': { handler: getPayout, invalidType: 'RequisicaoInvalida' },
};

export interface PspSimulatorOptions {
  host?: string;
  /** 0 for any free port. */
  port: number;
  stateFile: string;
  /** PEM: the server's certificate and key, and the CA its clients' certificates must chain to. */
  tls: { cert: string; key: string; ca: string };
  /**
   * The starting OAuth2 client (the service's, in development): it owns what it makes, and what
   * names no client. More clients, each with its own notification URLs, are registered by a
   * control (`PUT /_simulator/clients/{id}`).
   */
  client: { id: string; secret: string };
  receiver: Receiver;
  /** Where the starting client's Pix are notified (the service's `POST /psp/v1/pix`), signed with this secret. */
  notify?: { url: string; secret: string };
  /** Where its payout outcomes go (`PayoutNotification`), signed the same way. */
  notifyPayouts?: { url: string; secret: string };
  tokenTtlSeconds?: number;
}

export interface RunningSimulator {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const formDecoded = (text: string) => {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
};

const sameText = (a: string, b: string) => {
  const [given, expected] = [Buffer.from(a), Buffer.from(b)];
  return given.length === expected.length && timingSafeEqual(given, expected);
};

/**
 * The PSP simulator's HTTPS server. Every API request needs a client certificate from the
 * configured CA (mutual TLS, as the API Pix requires) and a bearer token from `POST /oauth/token`
 * (client credentials); it is routed and checked against the document, and so is the answer.
 * `/_simulator/…` are the controls (controls.ts), which need neither.
 */
export async function runPspSimulator(options: PspSimulatorOptions): Promise<RunningSimulator> {
  const contracts = await loadContracts();
  const notificationSchemas = notificationValidators(contracts);
  const store = new StateFile(options.stateFile, options.client.id);
  /** Bearer token → its client and when it expires. */
  const tokens = new Map<string, { client: string; expires: number }>();
  const ttl = options.tokenTtlSeconds ?? 3600;
  let origin = '';
  const starting = {
    ...(options.notify ? { notify: options.notify } : {}),
    ...(options.notifyPayouts ? { notifyPayouts: options.notifyPayouts } : {}),
  };
  const context = (client: string): ControlContext => ({
    store,
    receiver: options.receiver,
    origin,
    client,
    notificationSchemas,
    targets: (owner) =>
      owner === options.client.id ? starting : (store.state.clients[owner] ?? {}),
  });
  /** The secret of client `id`: the starting client's, or a registered one's. */
  const secretOf = (id: string) =>
    id === options.client.id ? options.client.secret : store.state.clients[id]?.secret;

  function token(request: IncomingMessage, raw: string): Answer {
    const form = new URLSearchParams(raw);
    const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? '');
    // RFC 6749 §2.3.1: HTTP Basic of the form-encoded id and secret (split at the first colon:
    // a secret may hold more), or both in the form.
    const pair = basic ? Buffer.from(basic[1] ?? '', 'base64').toString() : undefined;
    const colon = pair?.indexOf(':') ?? -1;
    const [id, secret] =
      pair !== undefined && colon >= 0
        ? [pair.slice(0, colon), pair.slice(colon + 1)].map(formDecoded)
        : [form.get('client_id') ?? '', form.get('client_secret') ?? ''];
    if (form.get('grant_type') !== 'client_credentials')
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    const expected = secretOf(id ?? '');
    if (expected === undefined || !sameText(secret ?? '', expected))
      return { status: 401, body: { error: 'invalid_client' } };
    const accessToken = randomBytes(24).toString('base64url');
    tokens.set(accessToken, { client: id ?? '', expires: Date.now() + ttl * 1000 });
    return {
      status: 200,
      body: { access_token: accessToken, token_type: 'Bearer', expires_in: ttl },
      headers: { 'cache-control': 'no-store' },
    };
  }

  function api(request: IncomingMessage, url: URL, raw: string): Answer {
    const method = (request.method ?? 'GET').toLowerCase();
    const path = url.pathname;
    const found = contracts
      .map((contract: Contract) => ({
        contract,
        operation: contract.api.matchOperation({ method, path, headers: {} }),
      }))
      .find(({ operation }) => operation !== undefined);
    if (!found?.operation)
      return problem(404, 'NaoEncontrado', 'Not Found', `${method.toUpperCase()} ${path}`);
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const holder = bearer === undefined ? undefined : tokens.get(bearer);
    if (holder === undefined || holder.expires <= Date.now())
      return {
        ...problem(401, 'NaoAutorizado', 'Unauthorized', 'A valid bearer token is required.'),
        headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      };
    // A failure a control set up answers in the call's stead, unchecked, like the 401 above.
    const fault = store.takeFault(holder.client, method, path);
    if (fault)
      return fault.status >= 500
        ? problem(fault.status, 'ServicoIndisponivel', 'Service Unavailable', 'Simulated outage.')
        : problem(fault.status, 'RequisicaoInvalida', 'Requisição inválida', 'Simulated refusal.');
    const { contract, operation } = found;
    const operationId = operation.operationId ?? '';
    const implemented = handlers[operationId];
    // The document's answer to a product not contracted: AcessoNegado.
    if (!implemented)
      return problem(403, 'AcessoNegado', 'Forbidden', `${operationId} is not simulated`);

    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        return invalid(implemented.invalidType, 'The body is not JSON.');
      }
    }
    const query = Object.fromEntries(url.searchParams);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
    const checked = contract.api.validateRequest({ method, path, query, headers, body }, operation);
    if (!checked.valid)
      return invalid(
        implemented.invalidType,
        'The request does not follow the API’s document.',
        violations(checked.errors),
      );
    const { params } = contract.api.router.parseRequest({ method, path, headers }, operation) as {
      params: Record<string, string>;
    };
    const answer = implemented.handler(context(holder.client), { params, query, body, headers });
    const verdict = contract.api.validateResponse(answer.body, operation, answer.status);
    if (!verdict.valid) {
      process.stderr.write(
        `psp-simulator: its own answer to ${operationId} (${answer.status}) breaks the document: ${JSON.stringify(verdict.errors)}\n`,
      );
      return problem(
        500,
        'ErroInternoDoServidor',
        'Internal Server Error',
        'The simulator’s answer broke the document (a defect of the simulator).',
        violations(verdict.errors),
      );
    }
    return answer;
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', origin);
    const authorized = (request.socket as TLSSocket).authorized;
    let answer: Answer;
    if (url.pathname.startsWith('/_simulator/')) {
      let body: Record<string, unknown>;
      try {
        body = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        body = {};
      }
      answer = await control(
        context(options.client.id),
        request.method ?? 'GET',
        url.pathname,
        body,
      );
    } else if (!authorized) {
      // Mutual TLS: without a certificate from the CA nothing of the API or the token answers.
      answer =
        url.pathname === '/oauth/token'
          ? {
              status: 401,
              body: {
                error: 'invalid_client',
                error_description: 'a client certificate is required',
              },
            }
          : problem(403, 'AcessoNegado', 'Forbidden', 'A client certificate is required.');
    } else if (url.pathname === '/oauth/token' && request.method === 'POST') {
      answer = token(request, raw);
    } else {
      answer = api(request, url, raw);
    }
    const isProblem =
      answer.status >= 400 &&
      typeof answer.body === 'object' &&
      answer.body !== null &&
      'type' in answer.body;
    response.writeHead(answer.status, {
      'content-type': isProblem ? 'application/problem+json' : 'application/json',
      ...answer.headers,
    });
    response.end(JSON.stringify(answer.body));
    // What a PSP does after answering (a payout settled at once is notified): never awaited by
    // the caller, and a failure only logged, as a PSP's retries are its own business.
    answer
      .after?.()
      .catch((error: unknown) =>
        process.stderr.write(
          `psp-simulator: ${error instanceof Error ? error.message : String(error)}\n`,
        ),
      );
  }

  const server = createServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      ca: options.tls.ca,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (request, response) => {
      handle(request, response).catch((error: unknown) => {
        process.stderr.write(
          `psp-simulator: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        );
        if (!response.headersSent)
          response.writeHead(500, { 'content-type': 'application/problem+json' });
        response.end(
          JSON.stringify(problem(500, 'ErroInternoDoServidor', 'Internal Server Error').body),
        );
      });
    },
  );
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  origin = `https://${host}:${address.port}`;
  return {
    url: origin,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
