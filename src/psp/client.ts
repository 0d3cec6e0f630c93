import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { PspSettings } from '../config.js';
import type { components } from './bcb/api.js';
import { errorForStatus, PspError, type Problema } from './errors.js';
import type { components as PayoutComponents } from './payouts/api.js';

type Schemas = components['schemas'];
type Bodies = components['requestBodies'];
export type CobRequest = Bodies['CobBody']['content']['application/json'];
export type CobVRequest = Bodies['CobVBody']['content']['application/json'];
export type CobCreated = Schemas['CobGerada'];
export type CobVCreated = Schemas['CobVGerada'];
export type Cob = Schemas['CobCompleta'];
export type CobV = Schemas['CobVCompleta'];
export type Pix = Schemas['Pix'];
export type PixPage = Schemas['PixConsultados'];
export type DevolucaoRequest = Schemas['DevolucaoSolicitada'];
export type Devolucao = Schemas['Devolucao'];
export type PayoutRequest = PayoutComponents['schemas']['PayoutRequest'];
export type Payout = PayoutComponents['schemas']['Payout'];

export interface PspClientOptions {
  /** PSP_API_URL: the API Pix's paths, the payout port and `/oauth/token` hang from it. */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM: our client certificate and its key, and the CA the PSP's server certificate chains to. */
  tls: { cert: string; key: string; ca: string };
  /** Per request; default 15 s. */
  timeoutMs?: number;
}

interface Answer {
  status: number;
  text: string;
}

/** The most of a page the API Pix allows (`paginacao.itensPorPagina` ≤ 1000). */
const PAGE_SIZE = 1000;
const REMOVED = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';

/**
 * The lender's PSP, as contract §16 uses it: Banco Central's API Pix (immediate and due-date
 * charges, cancelling them, the Pix received, devolucoes) and the payout port, typed by the types
 * generated from both documents. Authenticates as the API Pix specifies: OAuth2 client credentials
 * over mutual TLS, the token kept until shortly before it expires and fetched again once when the
 * PSP answers 401. Every call is safe to repeat (PUTs by txid or id, payouts by idempotency key),
 * so a caller retries a `PspError` whose `retryable` is true and stops on any other.
 */
export class PspClient {
  private readonly agent: Agent;
  private readonly base: string;
  private token: { value: string; refreshAt: number } | undefined;
  private fetching: Promise<string> | undefined;

  constructor(private readonly options: PspClientOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
    if (!this.base.startsWith('https://'))
      throw new Error(`PSP_API_URL must be https (mutual TLS): ${options.apiUrl}`);
    this.agent = new Agent({ ...options.tls, keepAlive: true, maxSockets: 16 });
  }

  createCob(txid: string, cob: CobRequest): Promise<CobCreated> {
    return this.json('PUT', `/cob/${segment(txid)}`, cob);
  }

  createCobv(txid: string, cobv: CobVRequest): Promise<CobVCreated> {
    return this.json('PUT', `/cobv/${segment(txid)}`, cobv);
  }

  getCob(txid: string): Promise<Cob> {
    return this.json('GET', `/cob/${segment(txid)}`);
  }

  getCobv(txid: string): Promise<CobV> {
    return this.json('GET', `/cobv/${segment(txid)}`);
  }

  /** Removes a charge at the PSP, so it can no longer be paid. */
  cancelCharge(kind: 'cob' | 'cobv', txid: string): Promise<CobCreated | CobVCreated> {
    return this.json('PATCH', `/${kind}/${segment(txid)}`, { status: REMOVED });
  }

  /**
   * Every Pix received with `inicio <= horario <= fim`, all pages (`pageSize` each, ≤ 1000);
   * `devolucaoPresente`: only those with a devolucao (the reconciliation's refunds side).
   */
  async listPix(
    inicio: Date,
    fim: Date,
    pageSize = PAGE_SIZE,
    filter: { devolucaoPresente?: boolean } = {},
  ): Promise<Pix[]> {
    const received: Pix[] = [];
    for (let page = 0; ; page += 1) {
      const query = new URLSearchParams({
        inicio: inicio.toISOString(),
        fim: fim.toISOString(),
        ...(filter.devolucaoPresente === undefined
          ? {}
          : { devolucaoPresente: String(filter.devolucaoPresente) }),
        'paginacao.paginaAtual': String(page),
        'paginacao.itensPorPagina': String(pageSize),
      });
      const answer = await this.json<PixPage>('GET', `/pix?${query.toString()}`);
      received.push(...(answer.pix ?? []));
      if (page + 1 >= answer.parametros.paginacao.quantidadeDePaginas) return received;
    }
  }

  /**
   * Asks the PSP to return (part of) a Pix. `id` is ours and names the devolucao: asking again
   * with the same id and amount (a retry after a lost answer) gets the one already asked for.
   */
  async requestDevolucao(
    e2eid: string,
    id: string,
    devolucao: DevolucaoRequest,
  ): Promise<Devolucao> {
    const path = `/pix/${segment(e2eid)}/devolucao/${segment(id)}`;
    try {
      return await this.json<Devolucao>('PUT', path, devolucao);
    } catch (error) {
      if (!(error instanceof PspError) || error.code !== 'rejected') throw error;
      // The API Pix refuses an id already used (400); if it is this same devolucao, it is ours.
      const existing = await this.json<Devolucao>('GET', path).catch(() => undefined);
      if (existing?.valor === devolucao.valor) return existing;
      throw error;
    }
  }

  getDevolucao(e2eid: string, id: string): Promise<Devolucao> {
    return this.json('GET', `/pix/${segment(e2eid)}/devolucao/${segment(id)}`);
  }

  /** Exactly one payout per `idempotencyKey`, however often this is called. */
  sendPayout(idempotencyKey: string, payout: PayoutRequest): Promise<Payout> {
    return this.json('POST', '/payouts', payout, { 'idempotency-key': idempotencyKey });
  }

  getPayout(id: string): Promise<Payout> {
    return this.json('GET', `/payouts/${segment(id)}`);
  }

  close(): void {
    this.agent.destroy();
  }

  private async json<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const send = async (token: string) =>
      this.send(method, `${this.base}${path}`, payload, {
        ...headers,
        authorization: `Bearer ${token}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      });
    let answer = await send(await this.accessToken());
    if (answer.status === 401) {
      // The PSP forgot or expired our token before we thought: one new token, one more try.
      this.token = undefined;
      answer = await send(await this.accessToken());
    }
    const what = `PSP ${method} ${path.split('?')[0]}`;
    if (answer.status >= 400) throw errorForStatus(answer.status, what, problemOf(answer.text));
    try {
      return JSON.parse(answer.text) as T;
    } catch {
      throw new PspError(
        'invalid_answer',
        `${what} answered ${answer.status} without JSON`,
        answer.status,
      );
    }
  }

  private accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.refreshAt) return Promise.resolve(this.token.value);
    // One token request at a time, however many calls want one.
    this.fetching ??= this.fetchToken().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchToken(): Promise<string> {
    // RFC 6749 §2.3.1: client id and secret form-encoded, then HTTP Basic.
    const basic = Buffer.from(
      `${encodeURIComponent(this.options.clientId)}:${encodeURIComponent(this.options.clientSecret)}`,
    ).toString('base64');
    const answer = await this.send(
      'POST',
      `${this.base}/oauth/token`,
      new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
      { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    );
    if (answer.status !== 200) {
      const error = errorForStatus(answer.status, 'PSP token endpoint');
      // 400/401 from the token endpoint: our client id, secret or certificate were refused.
      throw answer.status === 400 || answer.status === 401
        ? new PspError(
            'unauthorized',
            `${error.message}: ${answer.text.slice(0, 200)}`,
            answer.status,
          )
        : error;
    }
    let grant: { access_token?: unknown; expires_in?: unknown };
    try {
      grant = JSON.parse(answer.text) as typeof grant;
    } catch {
      grant = {};
    }
    if (typeof grant.access_token !== 'string' || grant.access_token === '')
      throw new PspError('invalid_answer', 'PSP token endpoint answered no access_token', 200);
    const lifetimeMs = (typeof grant.expires_in === 'number' ? grant.expires_in : 300) * 1000;
    // Refreshed a minute before it expires (halfway, for a short-lived token), so no call carries
    // a token that dies on the way.
    this.token = {
      value: grant.access_token,
      refreshAt: Date.now() + Math.max(lifetimeMs - 60_000, lifetimeMs / 2),
    };
    return grant.access_token;
  }

  private send(
    method: string,
    url: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<Answer> {
    const timeoutMs = this.options.timeoutMs ?? 15_000;
    return new Promise((resolve, reject) => {
      const call = request(
        url,
        { method, agent: this.agent, headers, timeout: timeoutMs },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          response.on('error', (error) =>
            reject(new PspError('network', `PSP ${method}: ${error.message}`)),
          );
        },
      );
      call.on('timeout', () =>
        call.destroy(
          new PspError(
            'timeout',
            `PSP ${method} ${new URL(url).pathname}: no answer in ${timeoutMs} ms`,
          ),
        ),
      );
      call.on('error', (error) =>
        reject(
          error instanceof PspError
            ? error
            : new PspError('network', `PSP ${method} ${new URL(url).pathname}: ${error.message}`),
        ),
      );
      call.end(body);
    });
  }
}

const segment = (value: string) => encodeURIComponent(value);

function problemOf(text: string): Problema | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<Problema>;
    return typeof parsed.title === 'string' && typeof parsed.status === 'number'
      ? (parsed as Problema)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The client of the configured PSP (`Config.psp`): its PEM files read once, here. */
export const pspClientFor = (settings: PspSettings): PspClient =>
  new PspClient({
    apiUrl: settings.apiUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    tls: {
      cert: readFileSync(settings.tls.certFile, 'utf8'),
      key: readFileSync(settings.tls.keyFile, 'utf8'),
      ca: readFileSync(settings.tls.caFile, 'utf8'),
    },
  });
