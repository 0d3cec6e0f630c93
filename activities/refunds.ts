import { ApplicationFailure } from '@temporalio/common';
import { devolucoesOfRefund, findDevolucao, type Devolucao } from '../src/db/queries/devolucoes.js';
import { findLoanForOps } from '../src/db/queries/loans.js';
import { newId } from '../src/domain/ids.js';
import { devolucaoStatusOf, refundIdFor } from '../src/domain/loans/devolucoes.js';
import type { Tenant } from '../src/domain/tenant.js';
import {
  writeDevolucaoOutcome,
  writeRefundRequest,
  type DevolucaoOutcome,
} from '../src/ledger/refunds.js';
import type { Devolucao as PspDevolucao } from '../src/psp/client.js';
import { PspError } from '../src/psp/errors.js';
import { valorOf } from '../src/psp/valor.js';
import type { WorkflowStart } from '../src/temporal/outbox.js';
import { refundStart } from '../src/temporal/refund-workflows.js';
import type { DevolucaoStep } from '../workflows/refund/messages.js';
import type { ActivityDeps } from './index.js';
import { writeWithEvents } from './write-with-events.js';

/** What the payer's bank shows with the money (pacs.004's RemittanceInformation, ≤ 140). */
const DESCRICAO = 'Devolucao de valor recebido a maior';

/** What the PSP's answer about a devolução says, as ours. */
export function outcomeOfPsp(answer: PspDevolucao, now: Date): DevolucaoOutcome {
  const status = devolucaoStatusOf(answer.status) ?? 'processing';
  const settled = answer.horario.liquidacao ? new Date(answer.horario.liquidacao) : now;
  return {
    status: status === 'requested' ? 'processing' : status,
    rtrId: answer.rtrId,
    motivo: answer.motivo,
    at: Number.isNaN(settled.getTime()) ? now : settled,
  };
}

/**
 * Refusals that will not change by asking again (the PSP found the request wrong, the Pix
 * unknown, the id taken by another devolução): the devolução failed, its money stays due back.
 * Anything else — the PSP down, slow, or our credentials refused — is an outage, retried.
 */
const isRefusal = (error: unknown): error is PspError =>
  error instanceof PspError &&
  (error.code === 'rejected' || error.code === 'not_found' || error.code === 'conflict');

const stepOf = (row: Devolucao): DevolucaoStep => ({ id: row.id, status: row.status });

/** REFUND_AFTER's default (contract §10): a day after the money became due. */
export const DEFAULT_REFUND_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The automatic refund of money a transaction made due on a production loan (contract §16): its
 * workflow's start, for the outbox in that transaction, waiting REFUND_AFTER. None without a PSP
 * (its money leaves as before, by ops' hand) or for the sandbox, whose money never left a bank.
 */
export function automaticRefund(
  deps: Pick<ActivityDeps, 'psp' | 'loans' | 'taskQueue'>,
  tenant: Tenant,
  loanId: string,
  transactionId: string,
): WorkflowStart[] {
  if (tenant.environment !== 'production' || !deps.psp) return [];
  const afterMs = deps.loans.refundAfterMs ?? DEFAULT_REFUND_AFTER_MS;
  return [
    refundStart(
      tenant,
      { refundId: refundIdFor.transaction(transactionId), loanId, notBefore: Date.now() + afterMs },
      deps.taskQueue,
    ),
  ];
}

export function createRefundActivities(deps: ActivityDeps) {
  /** Records what the PSP said of a devolução (booking it if returned) with its events. */
  const record = async (devolucao: Devolucao, outcome: DevolucaoOutcome) => {
    const tenant: Tenant = { partnerId: devolucao.partnerId, environment: devolucao.environment };
    await writeWithEvents(deps, tenant, async (tx) => ({
      result: undefined,
      events: await writeDevolucaoOutcome(
        tx,
        devolucao.id,
        outcome,
        { transactionId: newId('txn'), eventId: newId('evt') },
        deps.loans.signingUrl,
      ),
    }));
  };
  const psp = () => {
    // Settings gone while devoluções were at the PSP: retried until the worker has them again.
    if (!deps.psp) throw new Error('no PSP is configured (PSP_API_URL): cannot ask the PSP');
    return deps.psp;
  };

  /** Asks the PSP for one devolução (`PUT /pix/{e2eid}/devolucao/{id}`), if not asked already. */
  async function send(devolucao: Devolucao): Promise<void> {
    if (!deps.psp) {
      // A worker without a PSP (development without the simulator) cannot send it: failed, the
      // money stays due back for ops to send by hand.
      await record(devolucao, {
        status: 'failed',
        motivo: 'No PSP is configured (PSP_API_URL) on the worker: not sent.',
        at: new Date(),
      });
      return;
    }
    try {
      const answer = await deps.psp.requestDevolucao(devolucao.endToEndId, devolucao.id, {
        valor: valorOf(devolucao.amount),
        natureza: 'ORIGINAL',
        descricao: DESCRICAO,
      });
      await record(devolucao, outcomeOfPsp(answer, new Date()));
    } catch (error) {
      if (!isRefusal(error)) throw error;
      await record(devolucao, {
        status: 'failed',
        motivo: `Refused by the PSP when asked: ${error.message}`,
        at: new Date(),
      });
    }
  }

  return {
    /**
     * The refund's devoluções (the refund workflow's first step): an ops refund's were written
     * when it was approved; an automatic one's are planned now, for whatever is still due back
     * and not on its way (none: nothing to do). See `writeRefundRequest`.
     */
    async requestRefund(input: { refundId: string; loanId: string }): Promise<DevolucaoStep[]> {
      const written = await devolucoesOfRefund(deps.db, input.refundId);
      if (written.length > 0) return written.map(stepOf);
      const loan = await findLoanForOps(deps.db, input.loanId);
      if (!loan)
        throw ApplicationFailure.nonRetryable(`loan ${input.loanId} not found`, 'loan_not_found');
      const rows = await deps.db.transaction((tx) =>
        writeRefundRequest(tx, {
          tenant: { partnerId: loan.partnerId, environment: loan.environment },
          loanId: loan.id,
          refundId: input.refundId,
          amount: 'all',
          origin: 'automatic',
        }),
      );
      return rows.map(stepOf);
    },

    /**
     * Asks the PSP for devolução `id` by its own id, so a retry after a lost answer names the same
     * one (the client reads it back when the PSP says the id is taken). A refusal marks it failed.
     */
    async sendDevolucao(input: { id: string }): Promise<void> {
      const devolucao = await findDevolucao(deps.db, input.id);
      if (devolucao?.status === 'requested') await send(devolucao);
    },

    /**
     * Asks the PSP how each open devolução of the refund stands (`GET …/devolucao/{id}`) and
     * records what changed: the fallback for a notification that never came. One still
     * `requested` (its PUT's answer lost with a crash) is asked for again. Answers every
     * devolução of the refund as it now stands.
     */
    async settleDevolucoes(input: { refundId: string }): Promise<DevolucaoStep[]> {
      for (const devolucao of await devolucoesOfRefund(deps.db, input.refundId)) {
        if (devolucao.status === 'requested') await send(devolucao);
        else if (devolucao.status === 'processing') {
          const answer = await psp().getDevolucao(devolucao.endToEndId, devolucao.id);
          await record(devolucao, outcomeOfPsp(answer, new Date()));
        }
      }
      return (await devolucoesOfRefund(deps.db, input.refundId)).map(stepOf);
    },
  };
}
