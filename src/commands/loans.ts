import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { findCreditOffer, findSimulation } from '../db/queries/credit-offers.js';
import { findCustomer } from '../db/queries/customers.js';
import { findLoan, insertLoan, type LoanView } from '../db/queries/loans.js';
import { creditOffers, customers, loans, loanSigners } from '../db/schema/index.js';
import { creditOfferEventTypes } from '../domain/credit/offers.js';
import { newId } from '../domain/ids.js';
import type { DisbursementAccount } from '../domain/loans/disbursement-account.js';
import { loanEventTypes } from '../domain/loans/loans.js';
import { hashSigningToken, signingToken } from '../domain/loans/signing-token.js';
import type { KeyRing } from '../domain/key-ring.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems } from '../errors.js';
import { presentCreditOffer } from '../presenters/credit-offers.js';
import { presentLoan, type SigningUrl } from '../presenters/loans.js';
import type { Logger } from '../logger.js';
import type { FileStore } from '../storage/file-store.js';
import { changeLoan, loanStart, type LoanTiming } from '../temporal/loan-workflows.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import {
  cancelUpdate,
  disbursementUpdate,
  paymentUpdate,
  payoffUpdate,
  signUpdate,
} from '../../workflows/loan/messages.js';
import { businessDate } from '../domain/business-date.js';
import {
  amountDue,
  lastPayoffDate,
  payoffQuote,
  type LateChargeRates,
  type PayoffQuote,
} from '../domain/loans/repayment.js';

import { customerNow, clockNow } from './customer-clock.js';
import { creditOfferNotFound } from './simulate-offer.js';

/** What loan commands need. */
export interface LoanDeps extends LoanTiming {
  db: Db;
  temporal: Client;
  logger: Logger;
  files: FileStore;
  taskQueue: string;
  clock: () => Date;
  signingUrl: SigningUrl;
  /** Keys of the signing links' tokens (see `signingToken`). */
  signingLinkKeys: KeyRing;
  /** LOAN_SIGNATURE_DEADLINE */
  signatureDeadlineMs: number;
  lender: { name: string; cnpj: string };
  /** LATE_FEE_RATE and LATE_INTEREST_MONTHLY_RATE, fixed in each new loan. */
  lateChargeRates: LateChargeRates;
}

export interface CreateLoanRequest {
  credit_offer_id: string;
  simulation_id: string;
  disbursement_account: DisbursementAccount;
  signers?: { name: string; cpf: string; email: string }[] | undefined;
}

export const loanNotFound = (id: string) => problems.notFound('loan_not_found', `No loan ${id}.`);

const offerUnavailable = (status: string) =>
  new ProblemError('credit_offer_unavailable', `The credit offer is ${status}.`);

/**
 * `POST /v3/loans`. Checks the offer and the simulation, writes the contract PDF to the file store,
 * then in one transaction — the offer locked, so an expiry or another loan cannot interleave — the
 * loan and its signers, the offer `accepted`, `credit_offer.accepted` and `loan.created`, and the
 * outbox row that starts the loan's workflow. A transaction that fails leaves no contract behind.
 */
export async function createLoan(
  deps: LoanDeps,
  tenant: Tenant,
  request: CreateLoanRequest,
): Promise<LoanView> {
  const realNow = deps.clock();
  const offer = await findCreditOffer(deps.db, tenant, request.credit_offer_id);
  if (!offer) throw creditOfferNotFound(request.credit_offer_id);
  // Validity, the contract's date and the signature deadline are business times, on the
  // customer's clock; `created_at` stays real.
  const customerClock = { environment: tenant.environment, customerId: offer.customerId };
  const now = await customerNow(deps.db, customerClock, realNow);
  const simulation = await findSimulation(deps.db, tenant, {
    creditOfferId: offer.id,
    simulationId: request.simulation_id,
  });
  if (!simulation)
    throw problems.notFound(
      'simulation_not_found',
      `No simulation ${request.simulation_id} of credit offer ${offer.id}.`,
    );
  if (offer.status !== 'available' || now >= offer.validUntil)
    throw offerUnavailable(offer.status === 'available' ? 'expired' : offer.status);
  if (now >= simulation.validUntil)
    throw new ProblemError(
      'simulation_expired',
      `The simulation expired at ${simulation.validUntil.toISOString()}; simulate again.`,
    );
  const customer = await findCustomer(deps.db, tenant, offer.customerId);
  if (!customer) throw creditOfferNotFound(offer.id);
  const extraSigners = request.signers ?? [];
  const own = extraSigners.findIndex((signer) => signer.cpf === customer.cpf);
  if (own >= 0)
    throw problems.validation([
      {
        path: `body.signers.${own}.cpf`,
        code: 'customer_cpf',
        message: 'The customer signs already; list only the other signers.',
      },
    ]);

  const loanId = newId('ln');
  const signers = [
    { name: customer.name, cpf: customer.cpf, email: customer.email },
    ...extraSigners,
  ];
  const pdf = Buffer.from(
    await (
      await contractPdf()
    ).renderContractPdf({
      loanId,
      issuedAt: now,
      environment: tenant.environment,
      lender: deps.lender,
      borrower: {
        name: customer.name,
        cpf: customer.cpf,
        email: customer.email,
        cnpj: customer.cnpj,
        tradingName: customer.tradingName,
      },
      signers: extraSigners,
      figures: simulation.figures,
      lateCharges: deps.lateChargeRates,
      disbursementAccount: request.disbursement_account,
    }),
  );
  const contractKey = `contracts/${loanId}.pdf`;
  const contractSha256 = createHash('sha256').update(pdf).digest('hex');
  await deps.files.put(contractKey, pdf, contractSha256);

  try {
    const written = await deps.db.transaction(async (tx) => {
      const [locked] = await tx
        .select({ status: creditOffers.status, validUntil: creditOffers.validUntil })
        .from(creditOffers)
        .where(eq(creditOffers.id, offer.id))
        .for('update');
      if (!locked || locked.status !== 'available')
        throw offerUnavailable(locked?.status ?? 'gone');
      const [holder] = await tx
        .select({ status: customers.status })
        .from(customers)
        .where(eq(customers.id, customer.id))
        .for('share');
      if (holder?.status !== 'active')
        throw offerUnavailable(`not available: the customer is ${holder?.status ?? 'gone'}`);
      // Read again under the customer's lock: a clock advance committed meanwhile counts.
      const at = await customerNow(tx, customerClock, realNow);
      if (at >= locked.validUntil) throw offerUnavailable('expired');

      await insertLoan(
        tx,
        {
          id: loanId,
          partnerId: tenant.partnerId,
          environment: tenant.environment,
          customerId: customer.id,
          creditOfferId: offer.id,
          simulationId: simulation.id,
          status: 'awaiting_signatures',
          figures: simulation.figures,
          disbursementAccount: request.disbursement_account,
          contractSha256,
          contractKey,
          signingTokenHash: hashSigningToken(signingToken(deps.signingLinkKeys, loanId)),
          signatureDeadline: new Date(at.getTime() + deps.signatureDeadlineMs),
          lateChargeRates: deps.lateChargeRates,
          createdAt: realNow,
          updatedAt: realNow,
        },
        signers,
      );
      const [accepted] = await tx
        .update(creditOffers)
        .set({ status: 'accepted', loanId, updatedAt: realNow })
        .where(and(eq(creditOffers.id, offer.id), eq(creditOffers.status, 'available')))
        .returning();
      const loan = await findLoan(tx, tenant, loanId);
      if (!accepted || !loan) throw new Error(`loan ${loanId} not written`);
      const deliveries = await recordAndFanOut(
        tx,
        tenant,
        [
          {
            id: newId('evt'),
            type: creditOfferEventTypes.accepted,
            data: presentCreditOffer(accepted),
            createdAt: realNow,
          },
          {
            id: newId('evt'),
            type: loanEventTypes.created,
            data: presentLoan(loan, deps.signingUrl, businessDate(at)),
            createdAt: realNow,
          },
        ],
        deps.taskQueue,
      );
      const start = await enqueueWorkflowStart(tx, loanStart(loan, deps.taskQueue, deps));
      return { loan, deliveries, start };
    });
    await dispatchWorkflowStart(deps, written.start);
    await startDeliveries(deps, written.deliveries);
    return written.loan;
  } catch (error) {
    await deps.files.delete(contractKey).catch(() => {});
    throw error;
  }
}

/** An Update id for a partner's command with an Idempotency-Key: retries find the first one. */
const commandId = (command: string, loan: LoanView, key: string) =>
  `${command}:${createHash('sha256').update(`${loan.partnerId}:${loan.environment}:${key}`).digest('hex')}`;

async function load(deps: LoanDeps, tenant: Tenant, loanId: string): Promise<LoanView> {
  const loan = await findLoan(deps.db, tenant, loanId);
  if (!loan) throw loanNotFound(loanId);
  return loan;
}

/** The loan as it stands after a command (read again: the workflow wrote it). */
const reload = (deps: LoanDeps, loan: LoanView) =>
  load(deps, { partnerId: loan.partnerId, environment: loan.environment }, loan.id);

export async function cancelLoan(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
  reason: string | undefined,
): Promise<LoanView> {
  const loan = await load(deps, tenant, loanId);
  await changeLoan(deps, loan, cancelUpdate, [{ reason: reason ?? null }]);
  return reload(deps, loan);
}

export interface SignatureEvidence {
  ipAddress: string | null;
  userAgent: string | null;
  /** How the signer was identified: the masked channel of the code they entered, or `sandbox_api`. */
  channel: string;
}

/**
 * A signer signs: on the hosted page once a code sent to them proved who they are (the cpf is
 * the verified one, never a typed one), or through the sandbox helper.
 */
export async function signLoan(
  deps: LoanDeps,
  loan: LoanView,
  cpf: string,
  evidence: SignatureEvidence,
): Promise<LoanView> {
  await changeLoan(deps, loan, signUpdate, [
    {
      cpf,
      signedAt: deps.clock().toISOString(),
      ipAddress: evidence.ipAddress,
      userAgent: evidence.userAgent?.slice(0, 1000) ?? null,
      contractSha256: loan.contractSha256,
      channel: evidence.channel,
    },
  ]);
  return reload(deps, loan);
}

export async function reportDisbursement(
  deps: LoanDeps,
  loan: LoanView,
  report: { outcome: 'confirmed' | 'failed'; reason?: string | undefined },
): Promise<LoanView> {
  await changeLoan(deps, loan, disbursementUpdate, [
    {
      outcome: report.outcome,
      reason: report.reason ?? null,
      at: clockNow(loan, deps.clock()).toISOString(),
    },
  ]);
  return reload(deps, loan);
}

/**
 * A payment of the oldest unpaid installment. `amount` defaults to what that row owes on the
 * payment's day (the sandbox helper's convenience); `paid_at` defaults to now and
 * may not lie in the future.
 */
export async function recordPayment(
  deps: LoanDeps,
  loan: LoanView,
  payment: { amount?: number | undefined; paid_at?: string | undefined },
  idempotencyKey?: string,
): Promise<LoanView> {
  const paidAt = checkPaidAt(loan, payment.paid_at, clockNow(loan, deps.clock()));
  const row = loan.figures.schedule[loan.paidInstallments];
  const due = row && amountDue(row, businessDate(paidAt), loan.lateChargeRates).amount;
  await changeLoan(
    deps,
    loan,
    paymentUpdate,
    [{ amount: payment.amount ?? due ?? 0, paidAt: paidAt.toISOString() }],
    idempotencyKey && commandId('payment', loan, idempotencyKey),
  );
  return reload(deps, loan);
}

/**
 * Early settlement (contract §12): every unpaid row at once, for the payoff amount of the day of
 * `paid_at`, in one `payoff` transaction; the loan finishes.
 */
export async function settleLoan(
  deps: LoanDeps,
  loan: LoanView,
  request: { paid_at?: string | undefined },
  idempotencyKey?: string,
): Promise<LoanView> {
  const paidAt = checkPaidAt(loan, request.paid_at, clockNow(loan, deps.clock()));
  await changeLoan(
    deps,
    loan,
    payoffUpdate,
    [{ paidAt: paidAt.toISOString() }],
    idempotencyKey && commandId('payoff', loan, idempotencyKey),
  );
  return reload(deps, loan);
}

/**
 * The payoff quote of `date` (default today, São Paulo, at most 30 days ahead):
 * pending rows at present value, rows due by then at their amount due.
 */
export function quotePayoff(
  deps: Pick<LoanDeps, 'clock'>,
  loan: LoanView,
  date: string | undefined,
): PayoffQuote {
  if (loan.status !== 'active')
    throw new ProblemError(
      'invalid_state',
      `The loan is ${loan.status}; only an active loan has a payoff.`,
    );
  const today = businessDate(clockNow(loan, deps.clock()));
  const on = date ?? today;
  const last = lastPayoffDate(today);
  if (on < today || on > last)
    throw problems.validation([
      {
        path: 'query.date',
        code: 'out_of_range',
        message: `Must be between today (${today}) and ${last}.`,
      },
    ]);
  const f = loan.figures;
  return payoffQuote(
    f.schedule.slice(loan.paidInstallments),
    on,
    String(f.monthly_interest_rate),
    loan.lateChargeRates,
  );
}

/** A payment's `paid_at`: now by default; never in the future, nor before the disbursement. */
function checkPaidAt(loan: LoanView, paidAtText: string | undefined, now: Date): Date {
  const paidAt = paidAtText ? new Date(paidAtText) : now;
  if (paidAt.getTime() > now.getTime())
    throw problems.validation([
      {
        path: 'body.paid_at',
        code: 'in_the_future',
        message: 'A payment cannot be dated later than now.',
      },
    ]);
  if (loan.status !== 'active')
    throw new ProblemError('invalid_state', `The loan is ${loan.status}; it takes no payments.`);
  if (loan.disbursedAt && paidAt.getTime() < loan.disbursedAt.getTime())
    throw problems.validation([
      {
        path: 'body.paid_at',
        code: 'before_disbursement',
        message: `A payment cannot be dated before the disbursement (${loan.disbursedAt.toISOString()}).`,
      },
    ]);
  return paidAt;
}

/** pdf-lib and its fonts (some 20 MB resident) load with the first contract, not at startup. */
const contractPdf = () => import('../domain/loans/contract-pdf.js');
