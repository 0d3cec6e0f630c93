/**
 * Money due back on a production loan leaves by devolução (contract §16). Ops ask for a refund
 * (`POST /ops/v1/loans/{id}/devolucoes`): checked now, held for a second operator (dual control),
 * and once approved its devoluções are written and its workflow (`refund/{rfd_id}`) started in one
 * transaction; the workflow asks the PSP. The PSP's notification of a Pix carries its devoluções'
 * statuses: each of ours that settled is booked here, once however often it is told.
 */
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import type { MoneyApproval } from '../db/queries/approvals.js';
import { devolucoesOfRefund, findDevolucao } from '../db/queries/devolucoes.js';
import { findLoanForOps, type LoanView } from '../db/queries/loans.js';
import { newId } from '../domain/ids.js';
import { devolucaoStatusOf, refundIdFor } from '../domain/loans/devolucoes.js';
import type { Actors } from '../domain/operators.js';
import { ProblemError, problems } from '../errors.js';
import {
  refundableNow,
  refundRefusal,
  writeDevolucaoOutcome,
  writeRefundRequest,
} from '../ledger/refunds.js';
import type { Logger } from '../logger.js';
import type { SigningUrl } from '../presenters/loans.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { refundStart } from '../temporal/refund-workflows.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import { loanNotFound } from './loan-deps.js';

export interface DevolucaoDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
}

/**
 * What an ops refund by devolução is checked against when asked (again when it runs, under the
 * loan's lock): a production loan (the sandbox's money never reached the PSP), a PSP to ask, and
 * an amount within what is due back and not on its way already, and within what the loan's Pix
 * can return. Answers the amount to hold: `amount`, or by default all that can leave this way.
 */
export async function checkDevolucaoRequest(
  deps: { db: Db; pspConfigured: boolean },
  loan: LoanView,
  amount: number | undefined,
): Promise<number> {
  if (loan.environment !== 'production')
    throw problems.validation([
      {
        path: 'params.loan_id',
        code: 'not_a_production_loan',
        message:
          'A sandbox loan’s money never reached the PSP: nothing to return by devolução (record a sandbox refund with POST /ops/v1/loans/{id}/refunds).',
      },
    ]);
  if (!deps.pspConfigured)
    throw new ProblemError(
      'psp_not_configured',
      'No PSP is configured (PSP_API_URL): record the refund sent by hand (POST /ops/v1/loans/{id}/refunds).',
    );
  const figures = await refundableNow(deps.db, loan);
  const asked = amount ?? Math.min(figures.available, figures.returnable);
  if (asked <= 0)
    throw problems.validation([
      {
        path: 'body.amount',
        code: figures.available > 0 ? 'above_returnable' : 'above_refund_due',
        message:
          figures.available > 0
            ? `The loan's Pix can return nothing more by devolução; record the ${figures.available} centavos due back as sent by hand.`
            : `The loan has nothing due back that is not on its way already (${figures.due} due, ${figures.open} by devolução under way).`,
      },
    ]);
  const refusal = refundRefusal(asked, figures);
  if (refusal) throw refusal;
  return asked;
}

/**
 * Runs an approved `devolucao` (the approval's workflow, through its activity): the refund named
 * by the approval (`rfd_` + its hex) is written — checked again under the loan's lock — with its
 * workflow's start, in one transaction. Run again (a retry): the refund as written, started once.
 */
export async function runDevolucaoRefund(
  deps: DevolucaoDeps,
  approval: MoneyApproval,
  actors: Actors,
): Promise<void> {
  const loan = await findLoanForOps(deps.db, approval.loanId);
  if (!loan) throw loanNotFound(approval.loanId);
  const tenant = { partnerId: loan.partnerId, environment: loan.environment };
  const refundId = refundIdFor.approval(approval.id);
  const start = await deps.db.transaction(async (tx) => {
    if ((await devolucoesOfRefund(tx, refundId)).length > 0) return null;
    const amount = approval.request.amount;
    if (typeof amount !== 'number') throw new Error(`approval ${approval.id}: no amount`);
    const written = await writeRefundRequest(tx, {
      tenant,
      loanId: loan.id,
      refundId,
      amount,
      origin: 'ops',
      actors,
    });
    return written.length > 0
      ? enqueueWorkflowStart(tx, refundStart(tenant, { refundId, loanId: loan.id }, deps.taskQueue))
      : null;
  });
  if (start) await dispatchWorkflowStart(deps, start);
}

/** A devolução as the PSP's notification of its Pix carries it (the API Pix's `Devolucao`). */
export interface DevolucaoNotice {
  id: string;
  status: string;
  rtrId?: string | undefined;
  motivo?: string | undefined;
  liquidacao?: string | undefined;
}

/**
 * The PSP notifies a Pix again when one of its devoluções settles (`devolucoes`, each with its
 * status): every one the service asked for that is `DEVOLVIDO` is booked, `NAO_REALIZADO` marked
 * failed with its `motivo` (see `writeDevolucaoOutcome`); told again, nothing changes. Devoluções
 * the service never asked for (another system's, one made at the PSP by hand) are left alone.
 * Answers how many changed.
 */
export async function recordDevolucaoNotices(
  deps: DevolucaoDeps & { signingUrl: SigningUrl },
  endToEndId: string,
  notices: readonly DevolucaoNotice[],
): Promise<number> {
  let changed = 0;
  for (const notice of notices) {
    const status = devolucaoStatusOf(notice.status);
    if (status !== 'returned' && status !== 'failed') continue;
    const ours = await findDevolucao(deps.db, notice.id);
    if (!ours || ours.endToEndId !== endToEndId || ours.status === status) continue;
    const tenant = { partnerId: ours.partnerId, environment: ours.environment };
    const settled = notice.liquidacao ? new Date(notice.liquidacao) : new Date();
    const deliveries = await deps.db.transaction(async (tx) => {
      const events = await writeDevolucaoOutcome(
        tx,
        notice.id,
        {
          status,
          rtrId: notice.rtrId,
          motivo: notice.motivo,
          at: Number.isNaN(settled.getTime()) ? new Date() : settled,
        },
        { transactionId: newId('txn'), eventId: newId('evt') },
        deps.signingUrl,
      );
      return recordAndFanOut(tx, tenant, events, deps.taskQueue);
    });
    await startDeliveries(deps, deliveries);
    changed += 1;
  }
  return changed;
}
