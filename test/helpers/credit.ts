import type { z } from 'zod';
import type { creditOfferSchema } from '../../src/http/routes/credit-offers/schema.js';
import type { loanSchema } from '../../src/http/routes/loans/schema.js';
import { files, registerCustomer, upload, type CustomerBody } from './customers.js';
import { moneyDesk, opsRequest } from './operators.js';
import { json, type Client } from './partners.js';
import { eventually } from './eventually.js';
import type { TestStack } from './stack.js';
import { completeBiometricsCapture, SigningBrowser, type CodeSource } from './hosted.js';

export type OfferBody = z.infer<typeof creditOfferSchema>;

/**
 * A sandbox customer taken to `active` over HTTP the quick way: every document, biometrics on the
 * hosted page, then the sandbox review approving it all. The stack's SANDBOX_REVIEW_DELAY must be
 * long (an automatic review would race this one). `codes`: where the biometrics code comes from,
 * the e-mail by default (the sandbox's published code where no test mailbox is read: benches).
 */
export async function activeCustomer(
  stack: Pick<TestStack, 'baseUrl'>,
  api: Client,
  overrides: Record<string, unknown> = {},
  codes?: CodeSource,
  /** A production customer: ops review it with this token (a sandbox token reviews its own). */
  opsToken?: string,
  /** The longest term ops approve for a production customer (default the table's). */
  maxInstallments?: number,
): Promise<CustomerBody> {
  const { customer, documents } = await submittedCustomer(stack, api, overrides, codes);
  const body = {
    items: [...documents, 'biometrics'].map((type) => ({ type, decision: 'approve' })),
  };
  if (opsToken) await approveCredit(stack, customer.id, opsToken, undefined, maxInstallments);
  const review = opsToken
    ? await fetch(`${stack.baseUrl}/ops/v1/customers/${customer.id}/review`, {
        method: 'POST',
        headers: { authorization: `Bearer ${opsToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    : await api(`/v3/sandbox/customers/${customer.id}/review`, { method: 'POST', body });
  if (review.status !== 200) throw new Error(`review: ${review.status} ${await review.text()}`);
  const reviewed = (await review.json()) as CustomerBody;
  if (reviewed.status !== 'active') throw new Error(`customer is ${reviewed.status} after review`);
  return reviewed;
}

/**
 * Ops approve a production customer's credit (R$ 30,000.00), once its analysis has run and waits
 * for them.
 */
export async function approveCredit(
  stack: Pick<TestStack, 'baseUrl'>,
  customerId: string,
  opsToken: string,
  approvedLimitAmount = 3_000_000,
  maxInstallments?: number,
): Promise<void> {
  await eventually(async () => {
    const decided = await fetch(`${stack.baseUrl}/ops/v1/customers/${customerId}/credit-decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opsToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        decision: 'approve',
        approved_limit_amount: approvedLimitAmount,
        ...(maxInstallments ? { max_installments: maxInstallments } : {}),
      }),
    });
    if (decided.status === 200) return true;
    const problem = await decided.text();
    if (decided.status === 409 && problem.includes('not run yet')) return undefined;
    throw new Error(`credit decision: ${decided.status} ${problem}`);
  }, `the credit analysis of ${customerId}`);
}

/**
 * A sandbox customer with every KYC item submitted — each document uploaded, biometrics done on
 * the hosted page — and nothing reviewed yet.
 */
export async function submittedCustomer(
  stack: Pick<TestStack, 'baseUrl'>,
  api: Client,
  overrides: Record<string, unknown> = {},
  codes?: CodeSource,
): Promise<{ customer: CustomerBody; documents: string[] }> {
  const customer = await registerCustomer(api, overrides);
  const documents = ['identity_card_front', 'identity_card_back', 'selfie'];
  if (customer.cnpj) documents.push('ccmei');
  for (const type of documents) {
    const response = await upload(api, customer.id, type, {
      bytes: files.pdf(),
      name: `${type}.pdf`,
    });
    if (response.status !== 201) throw new Error(`upload of ${type}: ${response.status}`);
  }
  const session = (await (
    await api(`/v3/customers/${customer.id}/biometrics`, { method: 'POST' })
  ).json()) as { session_url: string };
  const captured = await completeBiometricsCapture(
    stack.baseUrl,
    session.session_url,
    codes ?? { email: customer.email },
  );
  if (captured.status !== 200) throw new Error(`biometrics capture: ${captured.status}`);
  return { customer, documents };
}

/** The customer's offer once it has one in `status` (offers arrive through a workflow). */
export function offerOf(api: Client, customerId: string, status = 'available'): Promise<OfferBody> {
  return eventually(async () => {
    const page = (await (
      await api(`/v3/customers/${customerId}/credit-offers?status=${status}`)
    ).json()) as { data: OfferBody[] };
    return page.data[0];
  }, `a ${status} offer for ${customerId}`);
}

export type LoanBody = z.infer<typeof loanSchema>;

/**
 * A loan taken to `active` over HTTP: an active customer, a loan of its offer (the minimum over 3
 * installments, or the whole offer over its most installments with `size: 'largest'`), the
 * signature, and ops confirming the disbursement with `opsToken`. A sandbox loan by default,
 * signed by the sandbox helper; with `production`, `api` holds a production token, ops review the
 * customer and the signer signs on the hosted page with the code e-mailed to them.
 */
export async function activeLoan(
  stack: Pick<TestStack, 'baseUrl'>,
  api: Client,
  options: {
    opsToken: string;
    size?: 'smallest' | 'largest';
    codes?: CodeSource;
    production?: boolean;
    /** Registration fields of the customer (a `cnpj`, say). */
    customer?: Record<string, unknown>;
    /** Stop once signed (`processing`), before anyone disburses it. */
    signedOnly?: boolean;
  },
): Promise<LoanBody> {
  const customer = await activeCustomer(
    stack,
    api,
    options.customer ?? {},
    options.codes,
    options.production ? options.opsToken : undefined,
  );
  const offer = await offerOf(api, customer.id);
  const simulation = await json<{ id: string }>(
    api(`/v3/credit-offers/${offer.id}/simulations`, {
      method: 'POST',
      body:
        options.size === 'largest'
          ? { amount: offer.approved_amount, installments: offer.max_installments }
          : { amount: offer.min_amount, installments: 3 },
    }),
    201,
  );
  const loan = await json<LoanBody>(
    api('/v3/loans', {
      method: 'POST',
      body: {
        credit_offer_id: offer.id,
        simulation_id: simulation.id,
        disbursement_account: { type: 'pix', pix_key: customer.email },
      },
    }),
    201,
  );
  if (options.production) {
    const browser = new SigningBrowser(stack.baseUrl, loan.signing_url);
    await browser.identify(loan.signers[0]!.cpf, { email: customer.email });
    const signed = await browser.sign();
    if (signed.status !== 200) throw new Error(`signing page: ${signed.status}`);
  } else {
    await json(
      api(`/v3/sandbox/loans/${loan.id}/signatures`, {
        method: 'POST',
        body: { cpf: loan.signers[0]!.cpf },
      }),
      200,
    );
  }
  if (options.signedOnly) return json<LoanBody>(api(`/v3/loans/${loan.id}`));
  // Ops confirm the disbursement: on a production loan, a maker and a checker (dual control).
  const confirm = options.production
    ? await moneyDesk(stack, options.opsToken)
    : (path: string, body: unknown) => opsRequest(stack, options.opsToken, path, body);
  const active = await json<LoanBody>(
    confirm(`/loans/${loan.id}/disbursement`, { outcome: 'confirmed' }),
    200,
  );
  if (active.status !== 'active') throw new Error(`loan ${loan.id} is ${active.status}`);
  return active;
}
