/**
 * `client.sandbox`: what a person or a bank does in production, done by the partner in the
 * sandbox (`/v3/sandbox/...`, sandbox credentials only).
 */
import type { Core, RequestOptions } from './client.js';
import { ApiError } from './errors.js';
import type { Customer, JsonBody } from './types.js';

/** The sandbox's published one-time code (hosted pages accept it beside the e-mailed one). */
export const SANDBOX_CODE = '000000';

/** The CSRF token a hosted page's form carries. */
const csrfIn = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];

export function sandbox(core: Core) {
  const { api, call, init } = core;
  const customerPath = (customerId: string) => ({ params: { path: { customer_id: customerId } } });
  const loanPath = (loanId: string) => ({ params: { path: { loan_id: loanId } } });

  const reviewCustomer = (
    customerId: string,
    body: JsonBody<'/v3/sandbox/customers/{customer_id}/review', 'post'>,
    options?: RequestOptions,
  ) =>
    call(
      api.POST('/v3/sandbox/customers/{customer_id}/review', {
        ...customerPath(customerId),
        body,
        ...init(options),
      }),
    );

  return {
    /** Approve or reject submitted KYC items, as the lender's analysts would. */
    reviewCustomer,
    /** Approves every submitted KYC item of the customer (the automatic review, at once). */
    async approveCustomer(customerId: string): Promise<Customer> {
      const customer = await call(api.GET('/v3/customers/{customer_id}', customerPath(customerId)));
      const items = customer.kyc
        .filter((item) => item.status === 'submitted')
        .map((item) => ({ type: item.type, decision: 'approve' as const }));
      if (items.length === 0) return customer;
      return reviewCustomer(customerId, { items });
    },
    denyCustomer: (
      customerId: string,
      body: JsonBody<'/v3/sandbox/customers/{customer_id}/deny', 'post'>,
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/customers/{customer_id}/deny', {
          ...customerPath(customerId),
          body,
          ...init(options),
        }),
      ),
    /**
     * Does what the customer does on the hosted biometrics page: opens a session, asks for a
     * code and types the sandbox's published one. Answers the customer afterwards.
     */
    async captureBiometrics(customerId: string): Promise<Customer> {
      const session = await call(
        api.POST('/v3/customers/{customer_id}/biometrics', customerPath(customerId)),
      );
      const page = sameOrigin(core.baseUrl, session.session_url);
      // As a browser does: the page sets a form cookie and each form carries its CSRF token.
      const opened = await core.fetch(new Request(page));
      const cookie = opened.headers
        .getSetCookie()
        .map((set) => set.split(';')[0])
        .join('; ');
      const csrf = csrfIn(await opened.text());
      if (!opened.ok || !csrf) throw new ApiError(opened.status, 'the biometrics page has no form');
      const post = (url: string, fields: Record<string, string>) =>
        core.fetch(
          new Request(url, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
            body: new URLSearchParams({ csrf, ...fields }).toString(),
          }),
        );
      const sent = await post(`${page}/code`, {});
      const html = await sent.text();
      const codeId = /name="code_id" value="([^"]+)"/.exec(html)?.[1];
      if (!sent.ok || !codeId) throw new ApiError(sent.status, html.slice(0, 500));
      const captured = await post(page, { code_id: codeId, code: SANDBOX_CODE });
      if (!captured.ok) throw new ApiError(captured.status, (await captured.text()).slice(0, 500));
      await captured.body?.cancel();
      return call(api.GET('/v3/customers/{customer_id}', customerPath(customerId)));
    },
    /** Signs the loan as the signer with this cpf (the hosted signing page, skipped). */
    signLoan: (
      loanId: string,
      body: JsonBody<'/v3/sandbox/loans/{loan_id}/signatures', 'post'>,
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/loans/{loan_id}/signatures', {
          ...loanPath(loanId),
          body,
          ...init(options),
        }),
      ),
    /** Reports the disbursement's outcome now, instead of after the sandbox's delay. */
    reportDisbursement: (
      loanId: string,
      body: JsonBody<'/v3/sandbox/loans/{loan_id}/disbursement', 'post'>,
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/loans/{loan_id}/disbursement', {
          ...loanPath(loanId),
          body,
          ...init(options),
        }),
      ),
    /** A payment of the loan (by default what the oldest unpaid installment owes). */
    payLoan: (
      loanId: string,
      body: JsonBody<'/v3/sandbox/loans/{loan_id}/payments', 'post'> = {},
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/loans/{loan_id}/payments', {
          ...loanPath(loanId),
          body,
          ...init(options),
        }),
      ),
    /** Settles the loan: its payoff amount, paid. */
    payOffLoan: (
      loanId: string,
      body: JsonBody<'/v3/sandbox/loans/{loan_id}/payoff', 'post'> = {},
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/loans/{loan_id}/payoff', {
          ...loanPath(loanId),
          body,
          ...init(options),
        }),
      ),
    /** A Pix paying the charge, recorded as the PSP's notification is in production. */
    payCharge: (
      chargeId: string,
      body: JsonBody<'/v3/sandbox/charges/{charge_id}/pay', 'post'> = {},
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/charges/{charge_id}/pay', {
          params: { path: { charge_id: chargeId } },
          body,
          ...init(options),
        }),
      ),
    /** The borrower accepts the agreement, as the hosted page records it after the e-mailed code. */
    acceptAgreement: (agreementId: string, options?: RequestOptions) =>
      call(
        api.POST('/v3/sandbox/agreements/{agreement_id}/acceptance', {
          params: { path: { agreement_id: agreementId } },
          ...init(options),
        }),
      ),
    /** Moves the customer's clock to `advance_to`; `status` is `ready` once all of it happened. */
    advanceClock: (
      customerId: string,
      body: JsonBody<'/v3/sandbox/customers/{customer_id}/clock', 'post'>,
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/sandbox/customers/{customer_id}/clock', {
          ...customerPath(customerId),
          body,
          ...init(options),
        }),
      ),
    clock: (customerId: string) =>
      call(api.GET('/v3/sandbox/customers/{customer_id}/clock', customerPath(customerId))),
  };
}

/** The hosted page's path on the API the client talks to (its links name the public base URL). */
function sameOrigin(baseUrl: string, link: string): string {
  const url = new URL(link);
  return `${baseUrl}${url.pathname}`;
}
