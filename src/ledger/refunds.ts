/**
 * The writes of a refund by devolução (contract §16), shared by the API (an approved ops request,
 * the PSP's notification) and the refund workflow's activities, each inside the caller's
 * transaction and under the loan's row lock: what a refund returns, and what the PSP said of it.
 * A loan with money due back has ended (contract §14: only what a Pix brings above the payoff,
 * after the end or above a withdrawal is due back), so nothing but these writes and ops' manual
 * refunds touch it meanwhile, and no workflow of the loan waits on them.
 */
import { addRefundDue } from '../db/queries/charges.js';
import type { DbOrTx } from '../db/client.js';
import {
  changeDevolucao,
  devolucoesOfRefund,
  findDevolucao,
  insertDevolucoes,
  lockDevolucao,
  openDevolucaoAmount,
  returnablePixOf,
  type Devolucao,
} from '../db/queries/devolucoes.js';
import { postEntries } from '../db/queries/ledger.js';
import { insertLoanTransaction, lockAndReadLoan, type LoanView } from '../db/queries/loans.js';
import { businessDate } from '../domain/business-date.js';
import {
  devolucaoId,
  planDevolucoes,
  returnableAmount,
  type DevolucaoOrigin,
  type DevolucaoStatus,
} from '../domain/loans/devolucoes.js';
import { refundEntries } from '../domain/ledger/postings.js';
import { ledgerStep, loanEventTypes } from '../domain/loans/loans.js';
import type { Actors } from '../domain/operators.js';
import type { Tenant } from '../domain/tenant.js';
import { problems, type ProblemError } from '../errors.js';
import { presentLoan, type SigningUrl } from '../presenters/loans.js';
import type { NewEvent } from '../webhooks/fan-out.js';

/** What a refund may still return: due back, less what devoluções under way are returning. */
export async function refundableNow(
  tx: DbOrTx,
  loan: LoanView,
): Promise<{ due: number; open: number; available: number; returnable: number }> {
  const open = await openDevolucaoAmount(tx, loan.id);
  const available = Math.max(0, loan.refundDueAmount - open);
  const returnable = returnableAmount(await returnablePixOf(tx, loan.id));
  return { due: loan.refundDueAmount, open, available, returnable };
}

/** Why `amount` cannot leave by devolução now, if it cannot (a 422 naming what can). */
export function refundRefusal(
  amount: number,
  figures: { due: number; open: number; available: number; returnable: number },
): ProblemError | null {
  const field = (code: 'above_refund_due' | 'above_returnable', message: string) =>
    problems.validation([{ path: 'body.amount', code, message }]);
  if (amount > figures.available)
    return field(
      'above_refund_due',
      `The loan has ${figures.due} centavos due back${figures.open > 0 ? `, ${figures.open} of them already on their way back by devolução` : ''}: at most ${figures.available} centavos can be asked for.`,
    );
  if (amount > figures.returnable)
    return field(
      'above_returnable',
      `The loan's Pix can return at most ${figures.returnable} centavos by devolução (each at most what it brought, less its earlier devoluções); record the rest as sent by hand (POST /ops/v1/loans/{id}/refunds).`,
    );
  return null;
}

export interface RefundRequest {
  tenant: Tenant;
  loanId: string;
  refundId: string;
  /** Centavos, checked (a refusal is a 422); `all`: whatever devolução can return now. */
  amount: number | 'all';
  origin: DevolucaoOrigin;
  actors?: Actors;
}

/**
 * Writes a refund's devoluções, planned on the loan's Pix newest first (src/domain/loans/
 * devolucoes.ts), all `requested`: the refund workflow asks the PSP for each. Written already (a
 * retry, the same refund id): the rows as they are, nothing planned again. `all` with nothing to
 * return writes nothing.
 */
export async function writeRefundRequest(tx: DbOrTx, request: RefundRequest): Promise<Devolucao[]> {
  const loan = await lockAndReadLoan(tx, request.tenant, request.loanId);
  if (!loan) throw new Error(`loan ${request.loanId} not found`);
  const written = await devolucoesOfRefund(tx, request.refundId);
  if (written.length > 0) return written;
  const figures = await refundableNow(tx, loan);
  let amount: number;
  if (request.amount === 'all') amount = Math.min(figures.available, figures.returnable);
  else {
    const refusal = refundRefusal(request.amount, figures);
    if (refusal) throw refusal;
    amount = request.amount;
  }
  if (amount <= 0) return [];
  const { parts } = planDevolucoes(amount, await returnablePixOf(tx, loan.id));
  await insertDevolucoes(
    tx,
    parts.map((part, index) => ({
      id: devolucaoId(request.refundId, index),
      refundId: request.refundId,
      partnerId: loan.partnerId,
      environment: loan.environment,
      loanId: loan.id,
      endToEndId: part.endToEndId,
      amount: part.amount,
      origin: request.origin,
      status: 'requested' as const,
      actor: request.actors?.actor ?? null,
      approvedBy: request.actors?.approvedBy ?? null,
    })),
  );
  return devolucoesOfRefund(tx, request.refundId);
}

/** What the PSP says of a devolução: `GET …/devolucao/{id}`, its notification, or its refusal. */
export interface DevolucaoOutcome {
  status: Exclude<DevolucaoStatus, 'requested'>;
  rtrId?: string | undefined;
  motivo?: string | undefined;
  /** When it settled (`horario.liquidacao`), or failed. */
  at: Date;
}

/**
 * Records what the PSP said of devolução `id`, under the loan's lock, once: `returned` books it —
 * a `refund` transaction (Dr `refunds_payable`, Cr `disbursement_clearing`, as a refund sent by
 * hand), the loan's `refund_due_amount` down, `loan.refund_sent` —, `failed` keeps its `motivo`
 * and leaves the money due back, `processing` notes the PSP's `rtrId`. A devolução that ended
 * already, or one the service never asked for, changes nothing. Answers the events to fan out.
 */
export async function writeDevolucaoOutcome(
  tx: DbOrTx,
  id: string,
  outcome: DevolucaoOutcome,
  ids: { transactionId: string; eventId: string },
  signingUrl: SigningUrl,
): Promise<NewEvent[]> {
  const known = await findDevolucao(tx, id);
  if (!known) return [];
  const tenant: Tenant = { partnerId: known.partnerId, environment: known.environment };
  // The loan first, then the devolução: the order every refund write takes its locks in.
  const loan = await lockAndReadLoan(tx, tenant, known.loanId);
  const devolucao = await lockDevolucao(tx, id);
  if (!loan || !devolucao || devolucao.status === 'returned' || devolucao.status === 'failed')
    return [];
  if (outcome.status === 'processing') {
    if (devolucao.status !== 'processing' || (outcome.rtrId && !devolucao.rtrId))
      await changeDevolucao(tx, id, {
        status: 'processing',
        rtrId: outcome.rtrId ?? devolucao.rtrId,
      });
    return [];
  }
  if (outcome.status === 'failed') {
    await changeDevolucao(tx, id, {
      status: 'failed',
      rtrId: outcome.rtrId ?? devolucao.rtrId,
      motivo: (outcome.motivo ?? 'NAO_REALIZADO').slice(0, 500),
      settledAt: outcome.at,
    });
    return [];
  }
  // Returned: the money left. Dated when it settled, never after now.
  const occurredAt = new Date(Math.min(outcome.at.getTime(), Date.now()));
  const rtrId = outcome.rtrId ?? devolucao.rtrId;
  const written = await insertLoanTransaction(tx, tenant, loan.id, {
    id: ids.transactionId,
    step: ledgerStep.devolucao(id),
    type: 'refund',
    amount: devolucao.amount,
    // The return's end-to-end id names it in the payment system, as a Pix's names a payment.
    reference: rtrId ?? id,
    referenceSource: 'pix',
    actor: devolucao.actor,
    approvedBy: devolucao.approvedBy,
    occurredAt,
  });
  if (!written) throw new Error(`devolução ${id} booked concurrently`);
  await postEntries(tx, tenant, written, refundEntries(devolucao.amount));
  await addRefundDue(tx, loan.id, -devolucao.amount);
  await changeDevolucao(tx, id, {
    status: 'returned',
    rtrId,
    transactionId: written.id,
    settledAt: occurredAt,
  });
  const after = (await lockAndReadLoan(tx, tenant, loan.id))!;
  return [
    {
      id: ids.eventId,
      type: loanEventTypes.refundSent,
      data: {
        ...presentLoan(after, signingUrl, businessDate(occurredAt)),
        // As a refund sent by hand reads (the event's documented shape): the return's id names it.
        refund: { amount: devolucao.amount, reference: rtrId ?? id },
      },
      createdAt: after.updatedAt,
      ...(devolucao.actor ? { actor: devolucao.actor } : {}),
    },
  ];
}
