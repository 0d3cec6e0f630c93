/**
 * The partner API by resource: thin wrappers over the generated openapi-fetch client, whose types
 * (src/generated/partner.ts) every argument and answer is taken from. Money is integer centavos,
 * as the API sends it.
 */
import type { Core, RequestOptions } from './client.js';
import { sandbox } from './sandbox.js';
import type { components, JsonBody, ListQuery, Query } from './types.js';

/** A file to upload: its bytes, a name, and its type (PDF, JPEG or PNG). */
export interface UploadFile {
  data: Blob | Uint8Array;
  filename: string;
  contentType?: string;
}

type DocumentType = components['schemas']['DocumentUpload']['type'];

function multipart(fields: { type: DocumentType; file: UploadFile }): FormData {
  const form = new FormData();
  form.set('type', fields.type);
  const { data, filename, contentType } = fields.file;
  const blob =
    data instanceof Blob
      ? data
      : new Blob([data], {
          type: contentType ?? 'application/octet-stream',
        });
  form.set('file', blob, filename);
  return form;
}

/** The body openapi-fetch is given for a multipart operation: the form, sent as is. */
const formBody = (form: FormData) => ({
  body: form as never,
  bodySerializer: (body: unknown) => body as FormData,
});

const bytes = async (answer: Promise<ArrayBuffer>) => new Uint8Array(await answer);

export function resources(core: Core) {
  const { api, call, init } = core;
  const page = { limit: 100 } as const;

  const customers = {
    create: (body: JsonBody<'/v3/customers', 'post'>, options?: RequestOptions) =>
      call(api.POST('/v3/customers', { body, ...init(options) })),
    retrieve: (customerId: string) =>
      call(
        api.GET('/v3/customers/{customer_id}', { params: { path: { customer_id: customerId } } }),
      ),
    update: (
      customerId: string,
      body: JsonBody<'/v3/customers/{customer_id}', 'patch'>,
      options?: RequestOptions,
    ) =>
      call(
        api.PATCH('/v3/customers/{customer_id}', {
          params: { path: { customer_id: customerId } },
          body,
          ...init(options),
        }),
      ),
    list: (query: ListQuery<'/v3/customers'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/customers', { params: { query: { ...page, ...query, starting_after } } }),
      ),
    /** KYC documents: upload one per pending document item of the customer's `kyc`. */
    documents: {
      upload: (
        customerId: string,
        fields: { type: DocumentType; file: UploadFile },
        options?: RequestOptions,
      ) =>
        call(
          api.POST('/v3/customers/{customer_id}/documents', {
            params: { path: { customer_id: customerId } },
            ...formBody(multipart(fields)),
            ...init(options),
          }),
        ),
      list: (customerId: string, query: ListQuery<'/v3/customers/{customer_id}/documents'> = {}) =>
        core.list((starting_after) =>
          api.GET('/v3/customers/{customer_id}/documents', {
            params: {
              path: { customer_id: customerId },
              query: { ...page, ...query, starting_after },
            },
          }),
        ),
      retrieve: (customerId: string, documentId: string) =>
        call(
          api.GET('/v3/customers/{customer_id}/documents/{document_id}', {
            params: { path: { customer_id: customerId, document_id: documentId } },
          }),
        ),
      /** The file's bytes. */
      download: (customerId: string, documentId: string) =>
        bytes(
          call(
            api.GET('/v3/customers/{customer_id}/documents/{document_id}/file', {
              params: { path: { customer_id: customerId, document_id: documentId } },
              parseAs: 'arrayBuffer',
            }),
          ),
        ),
    },
    /** A file an item's review asked for beside its document. */
    uploadKycAttachment: (
      customerId: string,
      fields: { type: DocumentType; file: UploadFile },
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/customers/{customer_id}/kyc-attachments', {
          params: { path: { customer_id: customerId } },
          ...formBody(multipart(fields)),
          ...init(options),
        }),
      ),
    /** A hosted biometrics session: send the customer to its `session_url`. */
    createBiometricsSession: (customerId: string, options?: RequestOptions) =>
      call(
        api.POST('/v3/customers/{customer_id}/biometrics', {
          params: { path: { customer_id: customerId } },
          ...init(options),
        }),
      ),
    creditOffers: (
      customerId: string,
      query: ListQuery<'/v3/customers/{customer_id}/credit-offers'> = {},
    ) =>
      core.list((starting_after) =>
        api.GET('/v3/customers/{customer_id}/credit-offers', {
          params: {
            path: { customer_id: customerId },
            query: { ...page, ...query, starting_after },
          },
        }),
      ),
  };

  const creditOffers = {
    list: (query: ListQuery<'/v3/credit-offers'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/credit-offers', { params: { query: { ...page, ...query, starting_after } } }),
      ),
    retrieve: (creditOfferId: string) =>
      call(
        api.GET('/v3/credit-offers/{credit_offer_id}', {
          params: { path: { credit_offer_id: creditOfferId } },
        }),
      ),
    simulate: (
      creditOfferId: string,
      body: JsonBody<'/v3/credit-offers/{credit_offer_id}/simulations', 'post'>,
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/credit-offers/{credit_offer_id}/simulations', {
          params: { path: { credit_offer_id: creditOfferId } },
          body,
          ...init(options),
        }),
      ),
    retrieveSimulation: (creditOfferId: string, simulationId: string) =>
      call(
        api.GET('/v3/credit-offers/{credit_offer_id}/simulations/{simulation_id}', {
          params: { path: { credit_offer_id: creditOfferId, simulation_id: simulationId } },
        }),
      ),
  };

  const loanPath = (loanId: string) => ({ params: { path: { loan_id: loanId } } });
  const loans = {
    create: (body: JsonBody<'/v3/loans', 'post'>, options?: RequestOptions) =>
      call(api.POST('/v3/loans', { body, ...init(options) })),
    retrieve: (loanId: string) => call(api.GET('/v3/loans/{loan_id}', loanPath(loanId))),
    list: (query: ListQuery<'/v3/loans'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/loans', { params: { query: { ...page, ...query, starting_after } } }),
      ),
    cancel: (
      loanId: string,
      body: JsonBody<'/v3/loans/{loan_id}/cancel', 'post'> = {},
      options?: RequestOptions,
    ) =>
      call(api.POST('/v3/loans/{loan_id}/cancel', { ...loanPath(loanId), body, ...init(options) })),
    transactions: (loanId: string, query: ListQuery<'/v3/loans/{loan_id}/transactions'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/loans/{loan_id}/transactions', {
          params: { path: { loan_id: loanId }, query: { ...page, ...query, starting_after } },
        }),
      ),
    /** What settles the loan today (or on `query.date`). */
    payoff: (loanId: string, query?: Query<'/v3/loans/{loan_id}/payoff', 'get'>) =>
      call(
        api.GET('/v3/loans/{loan_id}/payoff', {
          params: { path: { loan_id: loanId }, ...(query ? { query } : {}) },
        }),
      ),
    /** The contract, a PDF. */
    contract: (loanId: string) =>
      bytes(
        call(
          api.GET('/v3/loans/{loan_id}/contract', { ...loanPath(loanId), parseAs: 'arrayBuffer' }),
        ),
      ),
    /**
     * The 7-day withdrawal right: answers the charge that returns the money (`chg_…`), or — when
     * payments already reach the amount released — the loan, withdrawn at once (`ln_…`, `cancelled`).
     */
    withdraw: (loanId: string, options?: RequestOptions) =>
      call(api.POST('/v3/loans/{loan_id}/withdrawal', { ...loanPath(loanId), ...init(options) })),
    charges: {
      create: (
        loanId: string,
        body: JsonBody<'/v3/loans/{loan_id}/charges', 'post'>,
        options?: RequestOptions,
      ) =>
        call(
          api.POST('/v3/loans/{loan_id}/charges', { ...loanPath(loanId), body, ...init(options) }),
        ),
      list: (loanId: string, query: ListQuery<'/v3/loans/{loan_id}/charges'> = {}) =>
        core.list((starting_after) =>
          api.GET('/v3/loans/{loan_id}/charges', {
            params: { path: { loan_id: loanId }, query: { ...page, ...query, starting_after } },
          }),
        ),
    },
    /** Payment agreements (acordos) on a late loan: simulate, make from a simulation, list. */
    agreements: {
      /** The debt today, its discount and the agreement's rows; valid until the end of the day. */
      simulate: (
        loanId: string,
        body: JsonBody<'/v3/loans/{loan_id}/agreements/simulations', 'post'>,
        options?: RequestOptions,
      ) =>
        call(
          api.POST('/v3/loans/{loan_id}/agreements/simulations', {
            ...loanPath(loanId),
            body,
            ...init(options),
          }),
        ),
      /**
       * The agreement of a simulation, `pending_acceptance` until the borrower accepts it on its
       * `acceptance_url` (a hosted page: the e-mailed code, the term's PDF of `term_sha256`).
       */
      create: (
        loanId: string,
        body: JsonBody<'/v3/loans/{loan_id}/agreements', 'post'>,
        options?: RequestOptions,
      ) =>
        call(
          api.POST('/v3/loans/{loan_id}/agreements', {
            ...loanPath(loanId),
            body,
            ...init(options),
          }),
        ),
      list: (loanId: string, query: ListQuery<'/v3/loans/{loan_id}/agreements'> = {}) =>
        core.list((starting_after) =>
          api.GET('/v3/loans/{loan_id}/agreements', {
            params: { path: { loan_id: loanId }, query: { ...page, ...query, starting_after } },
          }),
        ),
    },
  };

  const agreements = {
    retrieve: (agreementId: string) =>
      call(
        api.GET('/v3/agreements/{agreement_id}', {
          params: { path: { agreement_id: agreementId } },
        }),
      ),
  };

  /** Your reminder schedule (régua de cobrança) in this environment. */
  const collectionsSchedule = {
    retrieve: () => call(api.GET('/v3/collections/schedule', {})),
    /** Replaces the schedule whole. */
    update: (body: JsonBody<'/v3/collections/schedule', 'put'>, options?: RequestOptions) =>
      call(api.PUT('/v3/collections/schedule', { body, ...init(options) })),
  };

  const charges = {
    retrieve: (chargeId: string) =>
      call(api.GET('/v3/charges/{charge_id}', { params: { path: { charge_id: chargeId } } })),
    /** The charge's Pix QR code, a PNG. */
    qrCode: (chargeId: string) =>
      bytes(
        call(
          api.GET('/v3/charges/{charge_id}/qr.png', {
            params: { path: { charge_id: chargeId } },
            parseAs: 'arrayBuffer',
          }),
        ),
      ),
  };

  const events = {
    list: (query: ListQuery<'/v3/events'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/events', { params: { query: { ...page, ...query, starting_after } } }),
      ),
    retrieve: (eventId: string) =>
      call(api.GET('/v3/events/{event_id}', { params: { path: { event_id: eventId } } })),
  };

  const endpointPath = (endpointId: string) => ({ params: { path: { id: endpointId } } });
  const webhookEndpoints = {
    /** Answers the endpoint with its signing `secret`, shown only here and at a rotation. */
    create: (body: JsonBody<'/v3/webhooks/endpoints', 'post'>, options?: RequestOptions) =>
      call(api.POST('/v3/webhooks/endpoints', { body, ...init(options) })),
    list: (query: ListQuery<'/v3/webhooks/endpoints'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/webhooks/endpoints', {
          params: { query: { ...page, ...query, starting_after } },
        }),
      ),
    retrieve: (endpointId: string) =>
      call(api.GET('/v3/webhooks/endpoints/{id}', endpointPath(endpointId))),
    update: (endpointId: string, body: JsonBody<'/v3/webhooks/endpoints/{id}', 'patch'>) =>
      call(api.PATCH('/v3/webhooks/endpoints/{id}', { ...endpointPath(endpointId), body })),
    delete: async (endpointId: string): Promise<void> => {
      await call(api.DELETE('/v3/webhooks/endpoints/{id}', endpointPath(endpointId)));
    },
    /** A new secret; the current one keeps signing beside it for `expire_current_in` seconds. */
    rotateSecret: (
      endpointId: string,
      body: JsonBody<'/v3/webhooks/endpoints/{id}/secret/rotate', 'post'> = {},
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/webhooks/endpoints/{id}/secret/rotate', {
          ...endpointPath(endpointId),
          body,
          ...init(options),
        }),
      ),
    recover: (
      endpointId: string,
      body: JsonBody<'/v3/webhooks/endpoints/{id}/recover', 'post'>,
      options?: RequestOptions,
    ) =>
      call(
        api.POST('/v3/webhooks/endpoints/{id}/recover', {
          ...endpointPath(endpointId),
          body,
          ...init(options),
        }),
      ),
    deliveries: (
      endpointId: string,
      query: ListQuery<'/v3/webhooks/endpoints/{id}/deliveries'> = {},
    ) =>
      core.list((starting_after) =>
        api.GET('/v3/webhooks/endpoints/{id}/deliveries', {
          params: { path: { id: endpointId }, query: { ...page, ...query, starting_after } },
        }),
      ),
    resendDelivery: (endpointId: string, deliveryId: string, options?: RequestOptions) =>
      call(
        api.POST('/v3/webhooks/endpoints/{id}/deliveries/{delivery_id}/resend', {
          params: { path: { id: endpointId, delivery_id: deliveryId } },
          ...init(options),
        }),
      ),
  };

  const credentials = {
    create: (body: JsonBody<'/v3/auth/credentials', 'post'>, options?: RequestOptions) =>
      call(api.POST('/v3/auth/credentials', { body, ...init(options) })),
    list: (query: ListQuery<'/v3/auth/credentials'> = {}) =>
      core.list((starting_after) =>
        api.GET('/v3/auth/credentials', {
          params: { query: { ...page, ...query, starting_after } },
        }),
      ),
    retrieve: (clientId: string) =>
      call(
        api.GET('/v3/auth/credentials/{client_id}', { params: { path: { client_id: clientId } } }),
      ),
    revoke: (clientId: string) =>
      call(
        api.DELETE('/v3/auth/credentials/{client_id}', {
          params: { path: { client_id: clientId } },
        }),
      ),
  };

  return {
    customers,
    creditOffers,
    loans,
    charges,
    agreements,
    collectionsSchedule,
    events,
    webhookEndpoints,
    credentials,
    sandbox: sandbox(core),
  };
}
