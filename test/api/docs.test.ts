import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCatalogue } from '../../src/domain/webhooks/catalogue.js';
import { OPS_TOKEN, startStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack?.stop();
});

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { operationId: string; responses: Record<string, unknown>; requestBody?: unknown }
    >
  >;
}

describe('the partner OpenAPI document', () => {
  it('is served without a token, as OpenAPI 3.1, with every partner operation and its schemas', async () => {
    const response = await fetch(`${stack.baseUrl}/v3/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as OpenApiDocument;
    expect(document.openapi).toBe('3.1.0');
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(
        ([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`,
      ),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /v3/auth/token createToken',
        'POST /v3/auth/credentials createCredential',
        'GET /v3/auth/credentials listCredentials',
        'GET /v3/auth/credentials/{client_id} getCredential',
        'DELETE /v3/auth/credentials/{client_id} revokeCredential',
        'POST /v3/customers createCustomer',
        'GET /v3/customers listCustomers',
        'GET /v3/customers/{customer_id} getCustomer',
        'PATCH /v3/customers/{customer_id} updateCustomer',
        'POST /v3/customers/{customer_id}/documents uploadDocument',
        'GET /v3/customers/{customer_id}/documents listDocuments',
        'POST /v3/customers/{customer_id}/kyc-attachments uploadKycAttachment',
        'GET /v3/customers/{customer_id}/documents/{document_id} getDocument',
        'GET /v3/customers/{customer_id}/documents/{document_id}/file getDocumentFile',
        'POST /v3/customers/{customer_id}/biometrics createBiometricsSession',
        'GET /v3/customers/{customer_id}/credit-offers listCustomerCreditOffers',
        'GET /v3/credit-offers listCreditOffers',
        'GET /v3/credit-offers/{credit_offer_id} getCreditOffer',
        'POST /v3/credit-offers/{credit_offer_id}/simulations simulateCreditOffer',
        'GET /v3/credit-offers/{credit_offer_id}/simulations/{simulation_id} getSimulation',
        'POST /v3/loans createLoan',
        'GET /v3/loans listLoans',
        'GET /v3/loans/{loan_id} getLoan',
        'POST /v3/loans/{loan_id}/cancel cancelLoan',
        'GET /v3/loans/{loan_id}/transactions listLoanTransactions',
        'GET /v3/loans/{loan_id}/payoff getLoanPayoff',
        'GET /v3/loans/{loan_id}/contract getLoanContract',
        'POST /v3/loans/{loan_id}/charges createCharge',
        'GET /v3/loans/{loan_id}/charges listLoanCharges',
        'GET /v3/charges/{charge_id} getCharge',
        'GET /v3/charges/{charge_id}/qr.png getChargeQrCode',
        'POST /v3/loans/{loan_id}/withdrawal requestWithdrawal',
        'POST /v3/loans/{loan_id}/agreements/simulations simulateAgreement',
        'POST /v3/loans/{loan_id}/agreements createAgreement',
        'GET /v3/loans/{loan_id}/agreements listLoanAgreements',
        'GET /v3/agreements/{agreement_id} getAgreement',
        'POST /v3/sandbox/agreements/{agreement_id}/acceptance sandboxAcceptAgreement',
        'POST /v3/sandbox/charges/{charge_id}/pay sandboxPayCharge',
        'GET /v3/collections/schedule getCollectionSchedule',
        'PUT /v3/collections/schedule putCollectionSchedule',
        'POST /v3/sandbox/loans/{loan_id}/disbursement sandboxReportLoanDisbursement',
        'POST /v3/sandbox/loans/{loan_id}/payments sandboxRecordLoanPayment',
        'POST /v3/sandbox/loans/{loan_id}/payoff sandboxSettleLoan',
        'POST /v3/sandbox/loans/{loan_id}/signatures sandboxSignLoan',
        'GET /v3/events listEvents',
        'GET /v3/events/{event_id} getEvent',
        'POST /v3/sandbox/customers/{customer_id}/review sandboxReviewCustomer',
        'POST /v3/sandbox/customers/{customer_id}/deny sandboxDenyCustomer',
        'POST /v3/sandbox/customers/{customer_id}/clock advanceSandboxClock',
        'GET /v3/sandbox/customers/{customer_id}/clock getSandboxClock',
        'POST /v3/webhooks/endpoints createWebhookEndpoint',
        'GET /v3/webhooks/endpoints listWebhookEndpoints',
        'GET /v3/webhooks/endpoints/{id} getWebhookEndpoint',
        'PATCH /v3/webhooks/endpoints/{id} updateWebhookEndpoint',
        'DELETE /v3/webhooks/endpoints/{id} deleteWebhookEndpoint',
        'POST /v3/webhooks/endpoints/{id}/secret/rotate rotateWebhookSecret',
        'GET /v3/webhooks/endpoints/{id}/deliveries listWebhookDeliveries',
        'POST /v3/webhooks/endpoints/{id}/deliveries/{delivery_id}/resend resendWebhookDelivery',
        'POST /v3/webhooks/endpoints/{id}/recover recoverWebhookDeliveries',
      ].sort(),
    );
    // Every operation documents its success response's schema, and its body where it takes one.
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
        expect({
          path,
          method,
          // A 204 has no body by definition; every other success documents its schema.
          documented: Boolean(
            success && (success[0] === '204' || (success[1] as { content?: unknown }).content),
          ),
        }).toEqual({
          path,
          method,
          documented: true,
        });
        // Four actions take no input: opening a biometrics session, resending a delivery,
        // withdrawing from a loan and accepting an agreement in the sandbox.
        const bodiless =
          path.endsWith('/biometrics') ||
          path.endsWith('/resend') ||
          path.endsWith('/withdrawal') ||
          path.endsWith('/acceptance');
        if (method === 'patch' || (method === 'post' && !bodiless)) {
          expect({ path, method, body: op.requestBody !== undefined }).toEqual({
            path,
            method,
            body: true,
          });
        }
      }
    }
    const create = document.paths['/v3/auth/credentials']!.post!;
    expect(create.requestBody).toBeDefined();
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(['201', '401', '409', '422', '429']),
    );
    // Ops operations have their own document.
    expect(Object.keys(document.paths).some((path) => path.startsWith('/ops'))).toBe(false);
  });

  it('shows a real request and answer for every operation, and a schema per event type', async () => {
    type Content = Record<string, { example?: unknown }>;
    const document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            requestBody?: { content: Content };
            responses: Record<string, { content?: Content }>;
          }
        >
      >;
      webhooks: Record<string, { post: { requestBody: { content: Content } } }>;
    };
    const without: string[] = [];
    for (const item of Object.values(document.paths))
      for (const op of Object.values(item)) {
        const json = op.requestBody?.content['application/json'];
        if (json && json.example === undefined) without.push(`${op.operationId} request`);
        const answers = Object.entries(op.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([, response]) => response.content?.['application/json'])
          .filter((content) => content !== undefined);
        if (answers.length > 0 && answers.every((content) => content.example === undefined))
          without.push(`${op.operationId} response`);
      }
    // Spectral (npm run check) validates each example against its schema.
    expect(without).toEqual([]);
    expect(Object.keys(document.webhooks).sort()).toEqual([...eventCatalogue].sort());
    expect(document.webhooks['loan.payment_received']!.post.requestBody.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/LoanPaymentReceivedEvent' } },
    });
  });

  it('describes every field, parameter and property a partner reads or sends', async () => {
    type Schema = {
      $ref?: string;
      description?: string;
      type?: string | string[];
      properties?: Record<string, Schema>;
      items?: Schema;
      anyOf?: Schema[];
      oneOf?: Schema[];
      allOf?: Schema[];
    };
    const document = (await (await fetch(`${stack.baseUrl}/v3/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            parameters?: { name: string; description?: string; schema?: Schema }[];
            requestBody?: { content: Record<string, { schema?: Schema }> };
            responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
          }
        >
      >;
      components: { schemas: Record<string, Schema> };
    };
    const components = document.components.schemas;
    const described = (schema: Schema): boolean =>
      schema.description !== undefined ||
      (schema.$ref !== undefined && described(components[schema.$ref.split('/').pop()!]!)) ||
      [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(
        (option) => option.type !== 'null' && described(option),
      );
    const undescribed: string[] = [];
    const seen = new Set<string>();
    const walk = (schema: Schema | undefined, where: string): void => {
      if (!schema) return;
      if (schema.$ref) {
        const name = schema.$ref.split('/').pop()!;
        if (seen.has(name)) return;
        seen.add(name);
        return walk(components[name], name);
      }
      for (const option of [
        ...(schema.anyOf ?? []),
        ...(schema.oneOf ?? []),
        ...(schema.allOf ?? []),
      ])
        walk(option, where);
      walk(schema.items, `${where}[]`);
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (!described(property)) undescribed.push(`${where}.${name}`);
        walk(property, `${where}.${name}`);
      }
    };
    for (const item of Object.values(document.paths))
      for (const op of Object.values(item)) {
        for (const parameter of op.parameters ?? [])
          if (
            parameter.description === undefined &&
            !(parameter.schema && described(parameter.schema))
          )
            undescribed.push(`${op.operationId}: ${parameter.name}`);
        for (const content of Object.values(op.requestBody?.content ?? {}))
          walk(content.schema, `${op.operationId} body`);
        for (const response of Object.values(op.responses))
          for (const content of Object.values(response.content ?? {}))
            walk(content.schema, `${op.operationId} answer`);
      }
    for (const [name, schema] of Object.entries(components))
      if (!seen.has(name)) walk(schema, name);
    expect(undescribed).toEqual([]);
  });

  it('has an ops twin behind the ops token', async () => {
    expect((await fetch(`${stack.baseUrl}/ops/v1/openapi.json`)).status).toBe(401);
    const response = await fetch(`${stack.baseUrl}/ops/v1/openapi.json`, {
      headers: { Authorization: `Bearer ${OPS_TOKEN}` },
    });
    const document = (await response.json()) as OpenApiDocument;
    expect(Object.keys(document.paths).sort()).toEqual([
      '/ops/v1/approvals',
      '/ops/v1/approvals/{approval_id}',
      '/ops/v1/approvals/{approval_id}/approve',
      '/ops/v1/approvals/{approval_id}/reject',
      '/ops/v1/assignments',
      '/ops/v1/assignments/{assignment_id}',
      '/ops/v1/assignments/{assignment_id}/cancel',
      '/ops/v1/assignments/{assignment_id}/installments.csv',
      '/ops/v1/assignments/{assignment_id}/price-payment',
      '/ops/v1/assignments/{assignment_id}/remittances',
      '/ops/v1/assignments/{assignment_id}/remittances/{date}/payment',
      '/ops/v1/assignments/{assignment_id}/settle',
      '/ops/v1/assignments/{assignment_id}/submit',
      '/ops/v1/audit',
      '/ops/v1/customers/{customer_id}/credit-decision',
      '/ops/v1/customers/{customer_id}/deny',
      '/ops/v1/customers/{customer_id}/erasure',
      '/ops/v1/customers/{customer_id}/review',
      '/ops/v1/devolucoes',
      '/ops/v1/ledger/trial-balance',
      '/ops/v1/loans/{loan_id}/devolucoes',
      '/ops/v1/loans/{loan_id}/disbursement',
      '/ops/v1/loans/{loan_id}/disbursement/claim',
      '/ops/v1/loans/{loan_id}/ledger',
      '/ops/v1/loans/{loan_id}/payments',
      '/ops/v1/loans/{loan_id}/payoff',
      '/ops/v1/loans/{loan_id}/payout',
      '/ops/v1/loans/{loan_id}/refunds',
      '/ops/v1/operator-enrollments',
      '/ops/v1/operators',
      '/ops/v1/operators/{operator_id}',
      '/ops/v1/operators/{operator_id}/deactivation',
      '/ops/v1/operators/{operator_id}/reactivation',
      '/ops/v1/operators/{operator_id}/token',
      '/ops/v1/partners',
      '/ops/v1/received-pix/{end_to_end_id}',
      '/ops/v1/reconciliation/{date}',
      '/ops/v1/reconciliation/{date}/run',
      '/ops/v1/regulatory/scr3040',
      '/ops/v1/smoke-checks',
      '/ops/v1/smoke-checks/{id}',
      '/ops/v1/unmatched-pix',
      '/ops/v1/unmatched-pix/{end_to_end_id}/match',
      '/ops/v1/unmatched-pix/{end_to_end_id}/return',
    ]);
  });

  it('has a PSP twin behind the ops token: the Pix and payout notifications, signed', async () => {
    expect((await fetch(`${stack.baseUrl}/psp/v1/openapi.json`)).status).toBe(401);
    const response = await fetch(`${stack.baseUrl}/psp/v1/openapi.json`, {
      headers: { Authorization: `Bearer ${OPS_TOKEN}` },
    });
    const document = (await response.json()) as OpenApiDocument & {
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(Object.keys(document.paths).sort()).toEqual(['/psp/v1/payouts', '/psp/v1/pix']);
    expect(document.paths['/psp/v1/payouts']!.post!.operationId).toBe('receivePayoutOutcomes');
    const notify = document.paths['/psp/v1/pix']!.post!;
    expect(notify.operationId).toBe('receivePix');
    expect(Object.keys(notify.responses).sort()).toEqual(
      ['200', '400', '401', '413', '415', '422', '500', '503'].sort(),
    );
    expect(document.components.securitySchemes.psp).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Pix-Signature',
    });
  });
});

describe('/docs', () => {
  it('renders the reference from assets this service serves, and no other host', async () => {
    const page = await (await fetch(`${stack.baseUrl}/docs`)).text();
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(source.startsWith('/')).toBe(true);
      const asset = await fetch(`${stack.baseUrl}${source}`);
      expect({ source, status: asset.status }).toEqual({ source, status: 200 });
    }
    expect(page).toContain("url: '/v3/openapi.json'");
    expect((await fetch(`${stack.baseUrl}/docs/assets/package.json`)).status).toBe(404);
  });
});
