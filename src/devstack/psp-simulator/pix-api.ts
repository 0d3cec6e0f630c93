import { randomBytes, randomUUID } from 'node:crypto';
import { createDynamicPix, hasError } from 'pix-utils';
import type { components } from '../../psp/bcb/api.js';
import { centavosOf } from '../../psp/valor.js';
import { unsupported } from './cobv-value.js';
import { invalid, notFound, problem, type Answer } from './problems.js';
import type { Cob, CobV, Devolucao, Pix, StateFile } from './state.js';

type Schemas = components['schemas'];
type CobBody = components['requestBodies']['CobBody']['content']['application/json'];
type CobVBody = components['requestBodies']['CobVBody']['content']['application/json'];
type CobRevisada = Schemas['CobRevisada'];
type CobVRevisada = Schemas['CobVRevisada'];

/** Who the simulated PSP's account holder is: the lender (its key, and a cobv's `recebedor`). */
export interface Receiver {
  pixKey: string;
  name: string;
  cnpj: string;
  city: string;
  uf: string;
  cep: string;
  logradouro: string;
}

export interface Request {
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
  headers: Record<string, string | undefined>;
}

export interface PixApiContext {
  store: StateFile;
  receiver: Receiver;
  /** The simulator's own origin, for the payload locations it makes up. */
  origin: string;
  /**
   * The client the call authenticated as: it sees and changes only its own charges, Pix and
   * payouts, as an account at a PSP does (controls act as the starting client).
   */
  client: string;
}

const REMOVED = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
const alphanumeric = (length: number) =>
  Array.from(randomBytes(length), (byte) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[byte % 36]).join(
    '',
  );
/** `E`/`D`, the simulated PSP's ISPB, the minute in UTC, 11 characters: 32 in all. */
export const spiId = (prefix: 'E' | 'D', at: Date) =>
  `${prefix}99999008${at.toISOString().replace(/[-:T]/g, '').slice(0, 12)}${alphanumeric(11)}`;

function location(context: PixApiContext, kind: 'cob' | 'cobv', txid: string, at: Date) {
  const url = `${context.origin}/qr/v2/${randomUUID().replaceAll('-', '')}`;
  const pix = createDynamicPix({
    merchantName: context.receiver.name.slice(0, 25),
    merchantCity: context.receiver.city.slice(0, 15),
    url: url.replace(/^https:\/\//, ''),
  });
  if (hasError(pix)) throw new Error(`pix-utils refused the payload: ${pix.message}`);
  const id = context.store.state.nextLocationId++;
  return {
    loc: { id, txid, location: url, tipoCob: kind, criacao: at.toISOString() },
    location: url,
    pixCopiaECola: pix.toBRCode(),
  };
}

/** Whether a charge can still be paid at `now`: ATIVA and within its time. */
export function payable(
  charge: { kind: 'cob'; record: Cob } | { kind: 'cobv'; record: CobV },
  now: Date,
): { ok: true } | { ok: false; reason: string } {
  const { record } = charge;
  if (record.status !== 'ATIVA') return { ok: false, reason: `the charge is ${record.status}` };
  if (charge.kind === 'cob') {
    const created = Date.parse(charge.record.calendario.criacao ?? '');
    const ends = created + (charge.record.calendario.expiracao ?? 86_400) * 1000;
    if (now.getTime() >= ends) return { ok: false, reason: 'the charge expired' };
  } else {
    const due = charge.record.calendario.dataDeVencimento ?? '';
    const days = charge.record.calendario.validadeAposVencimento ?? 30;
    const last = new Date(Date.parse(`${due}T00:00:00-03:00`) + (days + 1) * 86_400_000);
    if (now.getTime() >= last.getTime()) return { ok: false, reason: 'the charge expired' };
  }
  return { ok: true };
}

export const today = (now: Date) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(now);

export function putCob(context: PixApiContext, request: Request): Answer {
  const { store, receiver } = context;
  const txid = request.params.txid ?? '';
  const body = request.body as CobBody;
  const existing = store.state.cobs[txid];
  if (existing && store.chargeClient(txid) !== context.client)
    return invalid('CobOperacaoInvalida', 'O txid já é usado por outro usuário recebedor.');
  if (existing && (existing.kind !== 'cob' || existing.record.status !== 'ATIVA'))
    return invalid('CobOperacaoInvalida', 'A cobrança já existe e não está ATIVA.');
  if (body.chave !== receiver.pixKey)
    return invalid('CobOperacaoInvalida', 'A chave não pertence a este usuário recebedor.', [
      { razao: 'chave de outro recebedor', propriedade: 'cob.chave' },
    ]);
  if (centavosOf(body.valor.original ?? '0.00') === 0)
    return invalid('CobOperacaoInvalida', 'O valor original é zero.', [
      { razao: 'zero', propriedade: 'cob.valor.original' },
    ]);
  const now = store.now();
  const criacao = existing?.record.calendario.criacao ?? now.toISOString();
  const record: Cob = {
    ...body,
    calendario: { criacao, expiracao: body.calendario?.expiracao ?? 86_400 },
    txid,
    revisao: existing ? existing.record.revisao + 1 : 0,
    ...(existing
      ? {
          loc: existing.record.loc,
          location: existing.record.location,
          pixCopiaECola: existing.record.pixCopiaECola,
        }
      : location(context, 'cob', txid, now)),
    status: 'ATIVA',
    valor: { ...body.valor, original: body.valor.original ?? '0.00' },
  };
  store.state.cobs[txid] = { kind: 'cob', record };
  store.state.chargeClients[txid] = context.client;
  store.save();
  return { status: existing ? 200 : 201, body: withoutPix(record) };
}

export function putCobV(context: PixApiContext, request: Request): Answer {
  const { store, receiver } = context;
  const txid = request.params.txid ?? '';
  const body = request.body as CobVBody;
  const existing = store.state.cobs[txid];
  if (existing && store.chargeClient(txid) !== context.client)
    return invalid('CobVOperacaoInvalida', 'O txid já é usado por outro usuário recebedor.');
  if (existing && (existing.kind !== 'cobv' || existing.record.status !== 'ATIVA'))
    return invalid('CobVOperacaoInvalida', 'A cobrança já existe e não está ATIVA.');
  if (body.chave !== receiver.pixKey)
    return invalid('CobVOperacaoInvalida', 'A chave não pertence a este usuário recebedor.', [
      { razao: 'chave de outro recebedor', propriedade: 'cobv.chave' },
    ]);
  const now = store.now();
  if ((body.calendario.dataDeVencimento ?? '') < today(now))
    return invalid('CobVOperacaoInvalida', 'A data de vencimento é anterior à criação.', [
      { razao: 'anterior à criação', propriedade: 'cobv.calendario.dataDeVencimento' },
    ]);
  if (centavosOf(body.valor.original ?? '0.00') === 0)
    return invalid('CobVOperacaoInvalida', 'O valor original é zero.', [
      { razao: 'zero', propriedade: 'cobv.valor.original' },
    ]);
  if ((body.calendario.validadeAposVencimento ?? 30) < 0)
    return invalid('CobVOperacaoInvalida', 'A validade após o vencimento é negativa.', [
      { razao: 'menor do que zero', propriedade: 'cobv.calendario.validadeAposVencimento' },
    ]);
  const notSimulated = unsupported(body.valor);
  if (notSimulated)
    return problem(403, 'AcessoNegado', 'Forbidden', `cobv com ${notSimulated} não é simulada`);
  const record = {
    ...body,
    calendario: {
      criacao: existing?.record.calendario.criacao ?? now.toISOString(),
      dataDeVencimento: body.calendario.dataDeVencimento,
      validadeAposVencimento: body.calendario.validadeAposVencimento ?? 30,
    },
    txid,
    revisao: existing ? existing.record.revisao + 1 : 0,
    recebedor: {
      nome: receiver.name,
      cnpj: receiver.cnpj,
      logradouro: receiver.logradouro,
      cidade: receiver.city,
      uf: receiver.uf,
      cep: receiver.cep,
    },
    ...(existing
      ? {
          loc: existing.record.loc,
          pixCopiaECola: existing.record.pixCopiaECola,
        }
      : withoutLocationField(location(context, 'cobv', txid, now))),
    status: 'ATIVA',
  } as CobV;
  store.state.cobs[txid] = { kind: 'cobv', record };
  store.state.chargeClients[txid] = context.client;
  store.save();
  return { status: existing ? 200 : 201, body: withoutPix(record) };
}

// CobVGerada has no `location` of its own: the loc carries it.
const withoutLocationField = ({ loc, pixCopiaECola }: ReturnType<typeof location>) => ({
  loc,
  pixCopiaECola,
});
const withoutPix = <T extends { pix?: unknown }>({ pix: _pix, ...rest }: T) => rest;

export function patchCharge(kind: 'cob' | 'cobv') {
  const tipo = kind === 'cob' ? 'CobOperacaoInvalida' : 'CobVOperacaoInvalida';
  return (context: PixApiContext, request: Request): Answer => {
    const { store } = context;
    const txid = request.params.txid ?? '';
    const charge = ownCharge(context, txid);
    if (!charge || charge.kind !== kind)
      return notFound(kind === 'cob' ? 'CobNaoEncontrado' : 'CobVNaoEncontrada', txid);
    if (charge.record.status !== 'ATIVA')
      return invalid(tipo, `A cobrança não está ATIVA (${charge.record.status}).`);
    const body = request.body as CobRevisada & CobVRevisada;
    if (body.status === REMOVED && Object.keys(body).length > 1)
      return invalid(tipo, 'Remoção junto com outras alterações.', [
        { razao: 'remoção com alterações', propriedade: `${kind}.status` },
      ]);
    const record = charge.record as Cob & CobV;
    // A revision may not move the charge to another location.
    const { loc: _loc, ...changes } = body;
    const revised = {
      ...record,
      ...changes,
      calendario: { ...record.calendario, ...body.calendario },
      valor: { ...record.valor, ...body.valor },
      revisao: record.revisao + 1,
      status: body.status ?? record.status,
    } as Cob & CobV;
    charge.record = revised;
    store.save();
    return { status: 200, body: withoutPix(revised) };
  };
}

/** The charge `txid` if it is the calling client's (another's is as unknown to it as none). */
const ownCharge = (context: PixApiContext, txid: string) =>
  context.store.chargeClient(txid) === context.client ? context.store.state.cobs[txid] : undefined;

/** The Pix `e2eid` if it was paid to one of the calling client's charges. */
const ownPix = (context: PixApiContext, e2eid: string) => {
  const pix = context.store.state.pix[e2eid];
  return pix && context.store.chargeClient(pix.txid) === context.client ? pix : undefined;
};

export function getCharge(kind: 'cob' | 'cobv') {
  return (context: PixApiContext, request: Request): Answer => {
    const txid = request.params.txid ?? '';
    const charge = ownCharge(context, txid);
    if (!charge || charge.kind !== kind)
      return notFound(kind === 'cob' ? 'CobNaoEncontrado' : 'CobVNaoEncontrada', txid);
    return { status: 200, body: charge.record };
  };
}

export function listPix(context: PixApiContext, request: Request): Answer {
  const { inicio = '', fim = '', txid, devolucaoPresente } = request.query;
  const from = Date.parse(inicio);
  const to = Date.parse(fim);
  if (to < from)
    return invalid('PixConsultaInvalida', 'fim é anterior a inicio.', [
      { razao: 'anterior a inicio', propriedade: 'fim' },
    ]);
  const page = Number(request.query['paginacao.paginaAtual'] ?? 0);
  const perPage = Number(request.query['paginacao.itensPorPagina'] ?? 100);
  const all = listed(context, `${from}|${to}|${txid ?? ''}|${devolucaoPresente ?? ''}`, (pix) => {
    const at = Date.parse(pix.horario);
    return (
      at >= from &&
      at <= to &&
      (txid === undefined || pix.txid === txid) &&
      (devolucaoPresente === undefined ||
        (devolucaoPresente === 'true') === (pix.devolucoes ?? []).length > 0) &&
      context.store.chargeClient(pix.txid) === context.client
    );
  });
  return {
    status: 200,
    body: {
      parametros: {
        inicio,
        fim,
        paginacao: {
          paginaAtual: page,
          itensPorPagina: perPage,
          // The document's minimum is one page, an empty one included.
          quantidadeDePaginas: Math.max(1, Math.ceil(all.length / perPage)),
          quantidadeTotalDeItens: all.length,
        },
      },
      pix: all.slice(page * perPage, (page + 1) * perPage),
    },
  };
}

/**
 * A listing's Pix in the PSP's order (horario, then end-to-end id), kept until the state next
 * changes: a client paging a day of 100,000 Pix asks for the same list a hundred times.
 */
let listing: { version: number; client: string; key: string; pix: Pix[] } | undefined;
function listed(context: PixApiContext, key: string, keep: (pix: Pix) => boolean): Pix[] {
  const { store, client } = context;
  if (listing?.version === store.version && listing.client === client && listing.key === key)
    return listing.pix;
  const pix = Object.values(store.state.pix)
    .filter(keep)
    .sort((a, b) => a.horario.localeCompare(b.horario) || a.endToEndId.localeCompare(b.endToEndId));
  listing = { version: store.version, client, key, pix };
  return pix;
}

export function putDevolucao(context: PixApiContext, request: Request): Answer {
  const { store } = context;
  const { e2eid = '', id = '' } = request.params;
  const pix = ownPix(context, e2eid);
  if (!pix) return notFound('PixNaoEncontrado', e2eid);
  const body = request.body as Schemas['DevolucaoSolicitada'];
  const devolucoes = pix.devolucoes ?? [];
  if (devolucoes.some((devolucao) => devolucao.id === id))
    return invalid('PixDevolucaoInvalida', `O id ${id} já foi usado por outra devolução.`, [
      { razao: 'id já utilizado', propriedade: 'id' },
    ]);
  const returned = devolucoes
    .filter((devolucao) => devolucao.status !== 'NAO_REALIZADO')
    .reduce((sum, devolucao) => sum + centavosOf(devolucao.valor), 0);
  if (returned + centavosOf(body.valor) > centavosOf(pix.valor))
    return invalid('PixDevolucaoInvalida', 'As devoluções excederiam o valor do Pix.', [
      { razao: 'excede o valor do Pix', propriedade: 'devolucao.valor' },
    ]);
  const now = store.now();
  const devolucao: Devolucao = {
    id,
    rtrId: spiId('D', now),
    valor: body.valor,
    ...(body.natureza ? { natureza: body.natureza } : {}),
    ...(body.descricao ? { descricao: body.descricao } : {}),
    horario: { solicitacao: now.toISOString() },
    status: 'EM_PROCESSAMENTO',
  };
  pix.devolucoes = [...devolucoes, devolucao];
  store.save();
  return { status: 201, body: devolucao };
}

export function getDevolucao(context: PixApiContext, request: Request): Answer {
  const { e2eid = '', id = '' } = request.params;
  const devolucao = ownPix(context, e2eid)?.devolucoes?.find((d) => d.id === id);
  if (!devolucao) return notFound('PixDevolucaoNaoEncontrada', `${e2eid}/${id}`);
  return { status: 200, body: devolucao };
}

export type { Pix };
