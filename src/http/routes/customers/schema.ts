import { isValidPhoneNumber } from 'libphonenumber-js';
import { z } from 'zod';
import {
  customerStatuses,
  kycItemStatuses,
  type ReviewDecision,
} from '../../../domain/customers/kyc.js';
import { normalizeCnpj, normalizeCpf } from '../../../domain/customers/tax-ids.js';
import { listEnvelope, listQuery } from '../../list.js';
import type { Upload } from '../../middleware/multipart-body.js';

const cpf = z
  .string()
  .transform(
    (value, ctx) =>
      normalizeCpf(value) ??
      (ctx.addIssue({
        code: 'custom',
        message: 'Not a valid CPF: 11 digits with matching check digits.',
      }),
      z.NEVER),
  )
  .meta({
    description: 'CPF, punctuation accepted; answered as 11 digits.',
    example: '529.982.247-25',
  });

const cnpj = z
  .string()
  .transform(
    (value, ctx) =>
      normalizeCnpj(value) ??
      (ctx.addIssue({
        code: 'custom',
        message:
          'Not a valid CNPJ: 14 characters (numeric or alphanumeric) with matching check digits.',
      }),
      z.NEVER),
  )
  .meta({
    description:
      'CNPJ, numeric or alphanumeric, punctuation accepted; answered uppercase without punctuation.',
    example: '12.ABC.345/01DE-35',
  });

const phone = z
  .string()
  .refine(
    (value) => /^\+[1-9]\d{7,14}$/.test(value) && isValidPhoneNumber(value),
    'Not a valid E.164 phone number, e.g. +5511987654321.',
  )
  .meta({ example: '+5511987654321' });

const name = z.string().trim().min(1).max(200);
const email = z.email().max(254);

export const createCustomerBody = z
  .strictObject({
    cpf,
    cnpj: cnpj.nullable().optional(),
    name,
    email,
    phone,
    trading_name: z.string().trim().min(1).max(200).nullable().optional(),
    external_id: z
      .string()
      .min(1)
      .max(255)
      .nullable()
      .optional()
      .meta({ description: "The partner's own reference." }),
  })
  .meta({ id: 'CreateCustomerRequest' });

const immutable = (field: string) =>
  z
    .unknown()
    .optional()
    .refine((value) => value === undefined, `${field} cannot be changed after creation.`);

export const patchCustomerBody = z
  .strictObject({
    email: email.optional(),
    phone: phone.optional(),
    name: name.optional(),
    cnpj: cnpj.nullable().optional(),
    trading_name: z.string().trim().min(1).max(200).nullable().optional(),
    cpf: immutable('cpf'),
    external_id: immutable('external_id'),
  })
  .refine(
    (body) => Object.values(body).some((value) => value !== undefined),
    'Send at least one field to change.',
  )
  .meta({ id: 'UpdateCustomerRequest' });

export const kycItemSchema = z
  .object({
    kind: z.enum(['document', 'data']),
    type: z.string().meta({ example: 'identity_card_front' }),
    description: z.string(),
    status: z.enum(kycItemStatuses),
    message: z.string().nullable(),
    uploaded_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'KycItem' });

export const customerSchema = z
  .object({
    id: z.string().meta({ example: 'cust_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
    status: z.enum(customerStatuses),
    cpf: z.string(),
    cnpj: z.string().nullable(),
    name: z.string(),
    email: z.string(),
    phone: z.string(),
    trading_name: z.string().nullable(),
    external_id: z.string().nullable(),
    kyc: z.array(kycItemSchema),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Customer' });

export const customerParams = z.object({
  customer_id: z.string().meta({ example: 'cust_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
});

export const customerListQuery = listQuery(['created_at', 'updated_at', 'name'], {
  external_id: z.string().max(255).optional(),
  cpf: cpf.optional(),
  status: z.enum(customerStatuses).optional(),
});
export const customerList = listEnvelope(customerSchema, 'CustomerList');

export const documentSchema = z
  .object({
    id: z.string().meta({ example: 'doc_0a1b2c3d4e5f60718293a4b5c6d7e8f9' }),
    type: z.string(),
    status: z.enum(['submitted', 'approved', 'rejected']),
    file_name: z.string(),
    content_type: z.enum(['application/pdf', 'image/jpeg', 'image/png']),
    size_bytes: z.int(),
    sha256: z.string(),
    uploaded_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Document' });

export const uploadFields = z.strictObject({
  type: z.string().min(1).max(64),
  file: z.custom<Upload>(
    (value) =>
      typeof value === 'object' && value !== null && Buffer.isBuffer((value as Upload).bytes),
    'Attach one file as `file`.',
  ),
});
export const uploadDocumentation = z
  .object({
    type: z.string().meta({ description: 'One of the document types in the customer’s `kyc`.' }),
    file: z.string().meta({ format: 'binary', description: 'PDF, JPEG or PNG, at most 10 MiB.' }),
  })
  .meta({ id: 'DocumentUpload' });

export const documentParams = customerParams.extend({ document_id: z.string() });
export const documentListQuery = listQuery(['created_at']);
export const documentList = listEnvelope(documentSchema, 'DocumentList');

export const biometricsSessionSchema = z
  .object({
    session_url: z
      .url()
      .meta({ description: 'A page of this service where the customer completes the capture.' }),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'BiometricsSession' });

const decisions = [
  'approve',
  'reject',
  'request_correction',
] as const satisfies readonly ReviewDecision[];
export const reviewBody = z
  .strictObject({
    items: z
      .array(
        z.strictObject({
          type: z.string().min(1).max(64),
          decision: z.enum(decisions),
          message: z.string().trim().min(1).max(1000).optional(),
        }),
      )
      .min(1)
      .max(20),
  })
  .meta({ id: 'ReviewRequest' });

export const denyBody = z
  .strictObject({ reason: z.string().trim().min(1).max(1000) })
  .meta({ id: 'DenyRequest' });
