import type { z } from 'zod';
import type { Customer } from '../db/queries/customers.js';
import type { Document } from '../db/queries/documents.js';
import type { customerSchema, documentSchema } from '../http/routes/customers/schema.js';

export function presentCustomer(customer: Customer): z.infer<typeof customerSchema> {
  return {
    id: customer.id,
    status: customer.status,
    cpf: customer.cpf,
    cnpj: customer.cnpj,
    name: customer.name,
    email: customer.email,
    phone: customer.phone,
    trading_name: customer.tradingName,
    external_id: customer.externalId,
    // Item and document types are the domain's keys by construction (the workflow writes them).
    kyc: customer.kyc as z.infer<typeof customerSchema>['kyc'],
    created_at: customer.createdAt.toISOString(),
    updated_at: customer.updatedAt.toISOString(),
  };
}

export function presentDocument(document: Document): z.infer<typeof documentSchema> {
  return {
    id: document.id,
    type: document.type as z.infer<typeof documentSchema>['type'],
    status: document.status,
    file_name: document.fileName,
    content_type: document.contentType as z.infer<typeof documentSchema>['content_type'],
    size_bytes: document.sizeBytes,
    sha256: document.sha256,
    uploaded_at: document.uploadedAt.toISOString(),
    created_at: document.createdAt.toISOString(),
    updated_at: document.updatedAt.toISOString(),
  };
}
