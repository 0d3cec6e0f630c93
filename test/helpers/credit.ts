import type { z } from 'zod';
import type { creditOfferSchema } from '../../src/http/routes/credit-offers/schema.js';
import { files, registerCustomer, upload, type CustomerBody } from './customers.js';
import type { Client } from './partners.js';
import { eventually } from './eventually.js';
import type { TestStack } from './stack.js';
import { completeBiometricsCapture, type CodeSource } from './hosted.js';

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
): Promise<CustomerBody> {
  const { customer, documents } = await submittedCustomer(stack, api, overrides, codes);
  const review = await api(`/v3/sandbox/customers/${customer.id}/review`, {
    method: 'POST',
    body: { items: [...documents, 'biometrics'].map((type) => ({ type, decision: 'approve' })) },
  });
  if (review.status !== 200) throw new Error(`review: ${review.status} ${await review.text()}`);
  const reviewed = (await review.json()) as CustomerBody;
  if (reviewed.status !== 'active') throw new Error(`customer is ${reviewed.status} after review`);
  return reviewed;
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
