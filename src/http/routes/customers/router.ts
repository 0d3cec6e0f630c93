import { z } from 'zod';
import { openBiometrics } from '../../../commands/biometrics.js';
import type { CustomerDeps } from '../../../commands/customer-deps.js';
import { updateCustomerData } from '../../../commands/change-customer.js';
import { registerCustomer } from '../../../commands/register-customer.js';
import { uploadDocument } from '../../../commands/upload-document.js';
import { findCustomer, findErasedCustomer, listCustomers } from '../../../db/queries/customers.js';
import { findDocument, listDocuments } from '../../../db/queries/documents.js';
import { acceptedFileTypes } from '../../../domain/file-types.js';
import { ProblemError, problems } from '../../../errors.js';
import { sendFile } from '../../send-file.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf, type AppContext } from '../../context.js';
import { presentPage } from '../../list.js';
import { presentCustomer, presentDocument } from '../../../presenters/customers.js';
import {
  biometricsSessionSchema,
  createCustomerBody,
  customerList,
  customerListQuery,
  customerParams,
  customerSchema,
  documentList,
  documentListQuery,
  documentParams,
  documentSchema,
  patchCustomerBody,
  patchCustomerDocumentation,
  uploadDocumentation,
  uploadFields,
} from './schema.js';

const tag = 'Customers';
const customerNotFound = (id: string) =>
  problems.notFound('customer_not_found', `No customer ${id}.`);

export function customerRoutes(api: ApiRouter, deps: CustomerDeps): void {
  /** The caller's document of the caller's customer, or the 404 naming which is missing. */
  const loadDocument = async (
    ctx: AppContext,
    params: { customer_id: string; document_id: string },
  ) => {
    const tenant = tenantOf(ctx);
    if (!(await findCustomer(deps.db, tenant, params.customer_id)))
      throw customerNotFound(params.customer_id);
    const document = await findDocument(deps.db, tenant, {
      customerId: params.customer_id,
      documentId: params.document_id,
    });
    if (!document)
      throw problems.notFound(
        'document_not_found',
        `No document ${params.document_id} for this customer.`,
      );
    return document;
  };

  api.add(
    {
      method: 'post',
      path: '/customers',
      operationId: 'createCustomer',
      summary: 'Register a customer',
      description:
        'Starts KYC and the credit analysis. The same cpf/cnpj with the same `external_id` answers the existing customer with 200; with another `external_id`, 409 `customer_already_exists`.',
      tag,
      security: 'partner',
      idempotent: true,
      body: createCustomerBody,
      responses: {
        201: {
          description: 'Registered.',
          schema: customerSchema,
          headers: { Location: 'Path of the customer.' },
        },
        200: {
          description: 'Already registered with this identity and external_id.',
          schema: customerSchema,
        },
      },
      errors: [409],
    },
    async (ctx, { body }) => {
      const { customer, created } = await registerCustomer(deps, tenantOf(ctx), {
        cpf: body.cpf,
        cnpj: body.cnpj ?? null,
        name: body.name,
        email: body.email,
        phone: body.phone,
        trading_name: body.trading_name ?? null,
        external_id: body.external_id ?? null,
      });
      ctx.status = created ? 201 : 200;
      ctx.set('Location', `/v3/customers/${customer.id}`);
      ctx.body = presentCustomer(customer);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/customers',
      operationId: 'listCustomers',
      summary: 'List and search customers',
      tag,
      security: 'partner',
      query: customerListQuery,
      responses: { 200: { description: 'A page of customers.', schema: customerList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = presentPage(await listCustomers(deps.db, tenantOf(ctx), query), presentCustomer);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/customers/{customer_id}',
      operationId: 'getCustomer',
      summary: 'Retrieve a customer',
      description: 'Read it after a `customer.kyc_updated` event to see the current KYC items.',
      tag,
      security: 'partner',
      params: customerParams,
      responses: { 200: { description: 'The customer.', schema: customerSchema } },
      errors: [404, 410],
    },
    async (ctx, { params }) => {
      const tenant = tenantOf(ctx);
      const customer = await findCustomer(deps.db, tenant, params.customer_id);
      if (customer) {
        ctx.body = presentCustomer(customer);
        return;
      }
      const erasedAt = await findErasedCustomer(deps.db, tenant, params.customer_id);
      if (!erasedAt) throw customerNotFound(params.customer_id);
      throw new ProblemError(
        'customer_erased',
        `Customer ${params.customer_id} was erased at ${erasedAt.toISOString()}.`,
        { erased_at: erasedAt.toISOString() },
      );
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/customers/{customer_id}',
      operationId: 'updateCustomer',
      summary: 'Update customer data',
      description:
        'Corrects fields; a field with a `pending_correction` item goes back to review. `cpf` and `external_id` cannot change.',
      tag,
      security: 'partner',
      params: customerParams,
      body: patchCustomerBody,
      bodyDocumentation: patchCustomerDocumentation,
      responses: { 200: { description: 'The customer after the change.', schema: customerSchema } },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const { cpf: _cpf, external_id: _externalId, ...fields } = body;
      const customer = await updateCustomerData(deps, tenantOf(ctx), params.customer_id, fields);
      ctx.body = presentCustomer(customer);
    },
  );

  const upload = async (
    ctx: AppContext,
    {
      params,
      body,
    }: {
      params: { customer_id: string };
      body: { type: string; file: { fileName: string; bytes: Buffer } };
    },
  ) => {
    const document = await uploadDocument(deps, tenantOf(ctx), {
      customerId: params.customer_id,
      type: body.type,
      fileName: body.file.fileName,
      bytes: body.file.bytes,
    });
    ctx.status = 201;
    ctx.set('Location', `/v3/customers/${params.customer_id}/documents/${document.id}`);
    ctx.body = presentDocument(document);
  };
  for (const [path, operationId, summary] of [
    ['/customers/{customer_id}/documents', 'uploadDocument', 'Upload a KYC document'],
    [
      '/customers/{customer_id}/kyc-attachments',
      'uploadKycAttachment',
      'Upload a KYC document (alias of /documents)',
    ],
  ] as const) {
    api.add(
      {
        method: 'post',
        path,
        operationId,
        summary,
        description:
          '`multipart/form-data` with `type` (a document item of the customer that is `pending` or `pending_resubmission`; another document type is 409 `invalid_state`) and `file` (PDF, JPEG or PNG by content, else 415; at most 10 MiB). Review is asynchronous: watch `customer.kyc_updated`.',
        tag,
        security: 'partner',
        idempotent: true,
        params: customerParams,
        body: uploadFields,
        bodyType: 'multipart',
        bodyDocumentation: uploadDocumentation,
        bodyEncoding: { file: { contentType: 'application/pdf, image/jpeg, image/png' } },
        responses: {
          201: {
            description: 'The document, submitted.',
            schema: documentSchema,
            headers: { Location: 'Path of the document.' },
          },
        },
        errors: [404, 409],
      },
      upload,
    );
  }

  api.add(
    {
      method: 'get',
      path: '/customers/{customer_id}/documents',
      operationId: 'listDocuments',
      summary: "List a customer's documents",
      tag,
      security: 'partner',
      params: customerParams,
      query: documentListQuery,
      responses: { 200: { description: 'A page of documents.', schema: documentList } },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      const tenant = tenantOf(ctx);
      if (!(await findCustomer(deps.db, tenant, params.customer_id)))
        throw customerNotFound(params.customer_id);
      ctx.body = presentPage(
        await listDocuments(deps.db, tenant, params.customer_id, query),
        presentDocument,
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/customers/{customer_id}/documents/{document_id}',
      operationId: 'getDocument',
      summary: 'Retrieve a document',
      tag,
      security: 'partner',
      params: documentParams,
      responses: { 200: { description: 'The document.', schema: documentSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = presentDocument(await loadDocument(ctx, params));
    },
  );

  api.add(
    {
      method: 'get',
      path: '/customers/{customer_id}/documents/{document_id}/file',
      operationId: 'getDocumentFile',
      summary: 'Download a document’s file',
      description:
        'The bytes as uploaded, streamed from the object store, with the document’s `content_type` and `Content-Length`; their SHA-256 is the document’s `sha256`.',
      tag,
      security: 'partner',
      params: documentParams,
      responses: {
        200: {
          description: 'The file.',
          contentType: [...acceptedFileTypes],
          schema: z.string().meta({ format: 'binary' }),
        },
      },
      errors: [404],
    },
    async (ctx, { params }) => {
      const document = await loadDocument(ctx, params);
      const file = await deps.files.open(document.storageKey);
      if (!file) throw new Error(`file of ${document.id} missing from the file store`);
      const extension = document.contentType.split('/')[1];
      sendFile(
        ctx,
        file,
        document.contentType,
        `attachment; filename="${document.id}.${extension}"`,
      );
    },
  );

  api.add(
    {
      method: 'post',
      path: '/customers/{customer_id}/biometrics',
      operationId: 'createBiometricsSession',
      summary: 'Create a biometric capture session',
      description:
        "Answers 200 with a URL of a page of this service where the customer completes the capture, valid 15 minutes. A new session replaces the previous one. On the page the customer asks for a 6-digit code, which the service e-mails to the customer's address on record, and types it: the capture is then recorded and the customer's `biometrics` KYC item is complete.\n\n**Sandbox:** no camera and no vendor are involved. Open `session_url` (a browser, or any HTTP client that keeps the page's cookie and sends its form's `csrf` field), press *Enviar código* (`POST {session_url}/code`, which answers the page with the code's `code_id`), then submit `code_id` and the code (`POST {session_url}`): the code e-mailed to the customer, or `000000`, the sandbox's published code. The SDK's `client.sandbox.captureBiometrics(customer_id)` does exactly that; docs/walkthrough-sandbox-customer.md, step 4, does it with curl.",
      tag,
      security: 'partner',
      idempotent: true,
      params: customerParams,
      responses: { 200: { description: 'The session.', schema: biometricsSessionSchema } },
      errors: [404, 409],
    },
    async (ctx, { params }) => {
      ctx.body = await openBiometrics(deps, tenantOf(ctx), params.customer_id);
    },
  );
}
