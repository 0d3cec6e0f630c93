import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { findCreditOffer, findSimulation } from '../db/queries/credit-offers.js';
import { findCustomer } from '../db/queries/customers.js';
import { findLoan, insertLoan, type LoanView } from '../db/queries/loans.js';
import { creditOffers, customers } from '../db/schema/index.js';
import { creditOfferEventTypes } from '../domain/credit/offers.js';
import { pricedIofDailyRate } from '../domain/credit/release-repricing.js';
import { newId } from '../domain/ids.js';
import type { DisbursementAccount } from '../domain/loans/disbursement-account.js';
import { loanEventTypes } from '../domain/loans/loans.js';
import { hashSigningToken, signingToken } from '../domain/loans/signing-token.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems } from '../errors.js';
import { presentCreditOffer } from '../presenters/credit-offers.js';
import { presentLoan } from '../presenters/loans.js';
import { loanStart } from '../temporal/loan-workflows.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import { businessDate } from '../domain/business-date.js';

import { customerNow } from './customer-clock.js';
import { creditOfferNotFound } from './simulate-offer.js';
import {
  assertRefinancingOffer,
  holdRefinancedLoans,
  priceRefinancing,
  recordRefinancings,
} from './create-refinancing.js';

import type { LoanDeps } from './loan-deps.js';

export interface CreateLoanRequest {
  credit_offer_id: string;
  simulation_id: string;
  disbursement_account: DisbursementAccount;
  signers?: { name: string; cpf: string; email: string }[] | undefined;
  /** Contract §17: the active loans this one pays off at its release. */
  refinances?: string[] | undefined;
}

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
  const refinances = request.refinances ?? [];
  // Contract §17: a refinancing is made on the offer its refinanced loan accepted (while a loan
  // repays, the customer's one live offer is that loan's); any other loan on an available one.
  if (refinances.length > 0) assertRefinancingOffer(offer, refinances);
  else if (offer.status !== 'available' || now >= offer.validUntil)
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

  const refinancing =
    refinances.length > 0
      ? await priceRefinancing(deps, tenant, customer, simulation, refinances)
      : undefined;

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
      ...(refinancing
        ? {
            refinanced: refinancing.payoffs.map((payoff) => ({
              loanId: payoff.loanId,
              payoffAmount: payoff.payoffAmount,
              date: simulation.figures.release_date,
            })),
          }
        : {}),
    }),
  );
  const contractKey = `contracts/${loanId}.pdf`;
  const contractSha256 = createHash('sha256').update(pdf).digest('hex');
  await deps.files.put(contractKey, pdf, contractSha256);

  try {
    const written = await deps.db.transaction(async (tx) => {
      const [locked] = await tx
        .select({
          status: creditOffers.status,
          validUntil: creditOffers.validUntil,
          loanId: creditOffers.loanId,
          spentAt: creditOffers.spentAt,
        })
        .from(creditOffers)
        .where(eq(creditOffers.id, offer.id))
        .for('update');
      if (!locked) throw offerUnavailable('gone');
      if (refinancing) assertRefinancingOffer(locked, refinances);
      else if (locked.status !== 'available') throw offerUnavailable(locked.status);
      const [holder] = await tx
        .select({ status: customers.status, erasedAt: customers.erasedAt })
        .from(customers)
        .where(eq(customers.id, customer.id))
        .for('share');
      if (holder?.erasedAt) throw offerUnavailable('not available: the customer was erased');
      if (holder?.status !== 'active')
        throw offerUnavailable(`not available: the customer is ${holder?.status ?? 'gone'}`);
      // Read again under the customer's lock: a clock advance committed meanwhile counts.
      const at = await customerNow(tx, customerClock, realNow);
      if (!refinancing && at >= locked.validUntil) throw offerUnavailable('expired');
      // The old loans again, under their locks: a payment since the pricing changes the contract.
      if (refinancing) await holdRefinancedLoans(tx, tenant, customer.id, simulation, refinancing);

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
          iofTerms: {
            flatRate: deps.iof.flat,
            dailyRate: pricedIofDailyRate(
              customer.cnpj ? 'mei' : 'individual',
              simulation.figures.principal_amount,
              deps.iof,
            ),
          },
          createdAt: realNow,
          updatedAt: realNow,
        },
        signers,
      );
      if (refinancing) await recordRefinancings(tx, tenant, loanId, simulation, refinancing);
      // A refinancing's offer stays its old loan's until the release hands it over.
      const [accepted] = refinancing
        ? [undefined]
        : await tx
            .update(creditOffers)
            .set({ status: 'accepted', loanId, updatedAt: realNow })
            .where(and(eq(creditOffers.id, offer.id), eq(creditOffers.status, 'available')))
            .returning();
      const loan = await findLoan(tx, tenant, loanId);
      if ((!accepted && !refinancing) || !loan) throw new Error(`loan ${loanId} not written`);
      const deliveries = await recordAndFanOut(
        tx,
        tenant,
        [
          ...(accepted
            ? [
                {
                  id: newId('evt'),
                  type: creditOfferEventTypes.accepted,
                  data: presentCreditOffer(accepted),
                  createdAt: realNow,
                },
              ]
            : []),
          {
            id: newId('evt'),
            type: loanEventTypes.created,
            data: presentLoan(loan, deps.signingUrl, businessDate(at)),
            createdAt: realNow,
          },
        ],
        deps.taskQueue,
      );
      const start = await enqueueWorkflowStart(
        tx,
        loanStart(loan, deps.taskQueue, deps.sandboxDisbursementDelayMs),
      );
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

const contractPdf = () => import('../domain/loans/contract-pdf.js');
