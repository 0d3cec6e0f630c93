import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { findCustomer } from '../src/db/queries/customers.js';
import type { DbOrTx } from '../src/db/client.js';
import { repaymentOf, repaymentTerms, type LoanView } from '../src/db/queries/loans.js';
import { isLate, isPaid } from '../src/domain/loans/allocation.js';
import type { ChargeScope } from '../src/domain/loans/charges.js';
import {
  cobExpiracao,
  cobvTerms,
  pspChargeKind,
  txidOfCharge,
  type PspChargeKind,
} from '../src/domain/pix/dynamic-charges.js';
import type { Tenant } from '../src/domain/tenant.js';
import { registerCharge, removeCharge, removeClosedCharges } from '../src/psp/charges.js';
import { PspError } from '../src/psp/errors.js';
import { valorOf } from '../src/psp/valor.js';
import type { ActivityDeps } from './index.js';

/**
 * Tries of a charge's activity when the PSP cannot be reached (Temporal's retries, 1 s then 2 s
 * apart): the partner waits for the charge, and the loan's other steps wait behind it, so after
 * these the partner hears a 503 and asks again.
 */
export const PSP_CHARGE_ATTEMPTS = 3;

/** A charge registered at the PSP, as the charge's row records it. */
export interface DynamicCharge {
  txid: string;
  brCode: string;
  pspKind: PspChargeKind;
}

/**
 * Production charges at the lender's PSP (contract §16), for the charge activities: null for a
 * sandbox loan or where no PSP is configured (the charge is then a static BR Code, as before).
 */
export function dynamicChargesFor(deps: ActivityDeps, tenant: Tenant) {
  const psp = tenant.environment === 'production' ? deps.psp : null;
  if (!psp) return null;
  return {
    /**
     * Registers the charge `chargeId` at the PSP before its row is written (in the same
     * transaction, under the loan's lock): the txid comes from the charge's id and the request
     * from the workflow's input, so a retry after a crash anywhere registers the same charge
     * again (a PUT by txid revises it to the same) and then writes it. Refused by the PSP, nothing
     * is written and the partner hears why (`psp_refused`, or `psp_unavailable` after
     * `PSP_CHARGE_ATTEMPTS`).
     */
    async register(
      tx: DbOrTx,
      charge: {
        loan: LoanView;
        chargeId: string;
        scope: ChargeScope;
        amount: number;
        expiresAt: Date;
        /** When the workflow asked for it (the customer's clock): the cob's time counts from it. */
        at: Date;
        /** The business date of `at`. */
        date: string;
      },
    ): Promise<DynamicCharge> {
      const txid = txidOfCharge(charge.chargeId);
      const customer = await findCustomer(tx, tenant, charge.loan.customerId);
      if (!customer) throw new Error(`customer of loan ${charge.loan.id} not found`);
      const devedor = debtorOf(customer);
      // A cobv names its debtor; a customer erased with a loan running (LGPD art. 18) has no
      // identity left to name, so that loan's row charges are cobs, which need none.
      const kind = devedor ? pspChargeKind(charge.scope) : 'cob';
      const original = valorOf(charge.amount);
      const common = {
        ...(devedor ? { devedor } : {}),
        chave: deps.loans.pix.key,
        solicitacaoPagador: `Empréstimo ${charge.loan.id}`,
      };
      try {
        if (kind === 'cob' || !devedor)
          return {
            txid,
            pspKind: 'cob',
            brCode: await registerCharge(psp, txid, {
              kind: 'cob',
              body: {
                ...common,
                calendario: { expiracao: cobExpiracao(charge.at, charge.expiresAt) },
                valor: { original },
              },
            }),
          };
        // A row's charge: the oldest unpaid row is the one `next` pays in full and the oldest of
        // those `overdue` pays.
        const row = repaymentOf(charge.loan).rows.find((candidate) => !isPaid(candidate));
        if (!row) throw new Error(`loan ${charge.loan.id} has no unpaid row to charge`);
        const terms = writable(() =>
          cobvTerms({
            rowDueDate: row.due_date,
            today: charge.date,
            late: isLate(row, charge.date),
            rates: repaymentTerms(charge.loan).lateCharges,
          }),
        );
        return {
          txid,
          pspKind: kind,
          brCode: await registerCharge(psp, txid, {
            kind,
            body: {
              ...common,
              devedor,
              calendario: terms.calendario,
              valor: { original, ...terms.lateCharges },
            },
          }),
        };
      } catch (error) {
        throw pspFailure(error);
      }
    },

    /**
     * After a charge request failed for good: the charge may have been registered by an earlier
     * attempt whose answer or commit was lost, so it is removed (best effort: a charge nobody was
     * given the code of is not paid, and its own time ends it).
     */
    async forget(chargeId: string, scope: ChargeScope): Promise<void> {
      // A row's charge is a cob when its customer was erased: either kind may hold the txid.
      const kinds: PspChargeKind[] = pspChargeKind(scope) === 'cob' ? ['cob'] : ['cobv', 'cob'];
      for (const kind of kinds)
        try {
          await removeCharge(psp, kind, txidOfCharge(chargeId));
        } catch (error) {
          deps.logger.warn({ err: error, chargeId }, 'could not remove a charge never written');
        }
    },

    /**
     * Once a change that closed charges is committed: removes them at the PSP now, so a replaced
     * or expired charge cannot be paid. Never throws: the worker's housekeeping removes what this
     * could not.
     */
    async removeClosed(of: { loanId?: string; chargeId?: string }): Promise<void> {
      await removeClosedCharges({ db: deps.db, psp, logger: deps.logger }, of).catch(
        (error: unknown) =>
          deps.logger.warn({ err: error, ...of }, 'removing closed charges at the PSP failed'),
      );
    },
  };
}

const CPF = /^\d{11}$/;
const CNPJ = /^\d{14}$/;

/** The charge's debtor (`devedor`): the customer's company or person; none once erased. */
function debtorOf(customer: {
  cpf: string;
  cnpj: string | null;
  name: string;
  tradingName: string | null;
}): { cnpj: string; nome: string } | { cpf: string; nome: string } | undefined {
  if (customer.cnpj && CNPJ.test(customer.cnpj))
    return { cnpj: customer.cnpj, nome: customer.tradingName ?? customer.name };
  return CPF.test(customer.cpf) ? { cpf: customer.cpf, nome: customer.name } : undefined;
}

/**
 * What the API Pix cannot write exactly (a late-charge rate of more than four decimal places) is
 * refused for good rather than rounded: the PSP would charge otherwise than the loan.
 */
function writable<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw ApplicationFailure.create({
      type: 'psp_refused',
      message: error.message,
      nonRetryable: true,
    });
  }
}

/**
 * A PSP failure as the charge's activity reports it: retried by Temporal while the PSP may come
 * back (until the last of `PSP_CHARGE_ATTEMPTS`), then a refusal the partner reads: 503
 * `psp_unavailable` (retry later) or 502 `psp_refused` (the PSP will refuse it again).
 */
function pspFailure(error: unknown): unknown {
  if (!(error instanceof PspError)) return error;
  if (error.retryable && Context.current().info.attempt < PSP_CHARGE_ATTEMPTS) return error;
  return ApplicationFailure.create({
    type: error.retryable ? 'psp_unavailable' : 'psp_refused',
    message: error.message,
    nonRetryable: true,
  });
}
