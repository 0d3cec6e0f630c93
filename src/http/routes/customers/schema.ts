import { isValidPhoneNumber } from 'libphonenumber-js';
import { z } from 'zod';
import type { ZodOpenApiOverrideMeta } from 'zod-openapi';
import {
  correctableFields,
  customerStatuses,
  documentTypes,
  kycItemStatuses,
  type CorrectableField,
  type DocumentType,
  type ReviewDecision,
} from '../../../domain/customers/kyc.js';
import { normalizeCnpj, normalizeCpf } from '../../../domain/customers/tax-ids.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';
import { UPLOAD_LIMIT_BYTES, type Upload } from '../../middleware/multipart-body.js';
import { trimmedText } from '../../text.js';

const documentTypeKeys = Object.keys(documentTypes) as [DocumentType, ...DocumentType[]];
const correctableFieldKeys = Object.keys(correctableFields) as [
  CorrectableField,
  ...CorrectableField[],
];
const kycItemTypes = [...documentTypeKeys, ...correctableFieldKeys] as [
  DocumentType | CorrectableField,
  ...(DocumentType | CorrectableField)[],
];

/** A cpf in a request: checked, answered as 11 digits. */
export const cpf = z
  .string()
  .regex(/^\d{3}\.?\d{3}\.?\d{3}-?\d{2}$/, 'Not a CPF: 11 digits, optionally as 529.982.247-25.')
  .transform(
    (value, ctx) =>
      normalizeCpf(value) ??
      (ctx.addIssue({
        code: 'custom',
        params: { code: 'invalid_format' },
        message: 'Not a valid CPF: 11 digits with matching check digits.',
      }),
      z.NEVER),
  )
  .meta({
    description: 'CPF, digits or punctuated; its check digits must match. Answered as 11 digits.',
    format: 'cpf',
    example: '529.982.247-25',
  });

export const cnpj = z
  .string()
  .regex(
    /^[0-9A-Za-z]{2}\.?[0-9A-Za-z]{3}\.?[0-9A-Za-z]{3}\/?[0-9A-Za-z]{4}-?\d{2}$/,
    'Not a CNPJ: 14 characters, optionally as 12.ABC.345/01DE-35.',
  )
  .transform(
    (value, ctx) =>
      normalizeCnpj(value) ??
      (ctx.addIssue({
        code: 'custom',
        params: { code: 'invalid_format' },
        message:
          'Not a valid CNPJ: 14 characters (numeric or alphanumeric) with matching check digits.',
      }),
      z.NEVER),
  )
  .meta({
    description:
      'CNPJ, numeric or alphanumeric, plain or punctuated; its check digits must match (ASCII − 48 rule). Answered uppercase without punctuation.',
    format: 'cnpj',
    example: '12.ABC.345/01DE-35',
  });

const phone = z
  .string()
  .regex(/^\+[1-9]\d{7,14}$/, {
    message: 'Not an E.164 phone number, e.g. +5511987654321.',
    abort: true,
  })
  .refine(isValidPhoneNumber, {
    message: 'Not a phone number in use in its country’s numbering plan.',
    params: { code: 'invalid_format' },
  })
  .meta({
    description: 'E.164, and a number of its country’s numbering plan (as libphonenumber judges).',
    format: 'e164',
    example: '+5511987654321',
  });

export const name = trimmedText(200).meta({
  description: 'The person’s full name, as on their documents.',
});
const tradingName = trimmedText(200).meta({
  description: 'The business’s trading name (nome fantasia), when there is a cnpj.',
});
// The document shows zod's pattern, which is the whole check: no `format: email`, whose readers
// each apply their own rules (RFC 5321 lengths, quoted parts…).
export const email = z
  .email()
  .max(254)
  .meta({
    description: 'Where the borrower is reached: signing and capture codes are sent here.',
    override: (({ jsonSchema }) => {
      delete jsonSchema.format;
    }) satisfies ZodOpenApiOverrideMeta,
  });
const externalId = z.string().min(1).max(255).meta({ description: "The partner's own reference." });

export const createCustomerBody = z
  .strictObject({
    cpf,
    cnpj: cnpj.nullable().optional(),
    name,
    email,
    phone,
    trading_name: tradingName.nullable().optional(),
    external_id: externalId.nullable().optional(),
  })
  .meta({ id: 'CreateCustomerRequest' });

const immutable = (field: string) =>
  z
    .unknown()
    .optional()
    .refine((value) => value === undefined, {
      message: `${field} cannot be changed after creation.`,
      params: { code: 'immutable' },
    });

const changeableFields = {
  email: email.optional(),
  phone: phone.optional(),
  name: name.optional(),
  cnpj: cnpj.nullable().optional(),
  trading_name: tradingName.nullable().optional(),
};

/** `cpf` and `external_id` are named so that sending them says why it is refused. */
export const patchCustomerBody = z
  .strictObject({
    ...changeableFields,
    cpf: immutable('cpf'),
    external_id: immutable('external_id'),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'Send at least one field to change.',
    params: { code: 'nothing_to_change' },
  });

export const patchCustomerDocumentation = z.strictObject(changeableFields).meta({
  id: 'UpdateCustomerRequest',
  description: 'At least one field. `cpf` and `external_id` cannot change (422).',
  minProperties: 1,
});

export const kycItemSchema = z
  .object({
    kind: z.enum(['document', 'data']).meta({
      description:
        '`document`: a file to upload (or, for `biometrics`, a capture to complete); `data`: a field to correct with PATCH.',
    }),
    type: z
      .enum(kycItemTypes)
      .meta({ example: 'identity_card_front', description: 'Which document or field.' }),
    description: z.string().meta({ description: 'The item, for a person.' }),
    status: z.enum(kycItemStatuses).meta({
      description:
        '`pending` until submitted, then `submitted` until reviewed: `approved`, or `pending_resubmission` / `pending_correction` with a `message`.',
    }),
    message: z
      .string()
      .nullable()
      .meta({ description: 'The reviewer’s reason, when asked again.' }),
    uploaded_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When its file was last uploaded (documents).' }),
  })
  .meta({ id: 'KycItem' });

export const customerSchema = z
  .object({
    id: idField('cust'),
    status: z.enum(customerStatuses).meta({
      description:
        '`pending_kyc` while items are owed, `under_review` once all are in, `active` when approved (offers follow), `denied` (final).',
    }),
    cpf: z.string().meta({ description: 'The borrower’s cpf, 11 digits.' }),
    cnpj: z
      .string()
      .nullable()
      .meta({ description: 'The business’s cnpj, 14 characters uppercase (null: a person only).' }),
    name: z.string().meta({ description: 'The borrower’s full name.' }),
    email: z.string().meta({ description: 'Where signing and capture codes are sent.' }),
    phone: z.string().meta({ description: 'E.164.' }),
    trading_name: z.string().nullable().meta({ description: 'The business’s trading name.' }),
    external_id: z
      .string()
      .nullable()
      .meta({ description: 'Your own reference, as registered (unique per identity).' }),
    kyc: z.array(kycItemSchema).meta({
      description:
        'What KYC asks of the customer and where each item stands: upload each `document`, complete `biometrics`, correct each `data` field.',
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Customer' });

export const customerParams = z.object({
  customer_id: pathId('cust', 'customer_not_found'),
});

export const customerListQuery = listQuery('cust', ['created_at', 'updated_at', 'name'], {
  external_id: z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Only the customer with this reference of yours.' }),
  cpf: cpf.optional(),
  status: z
    .enum(customerStatuses)
    .optional()
    .meta({ description: 'Only customers in this status.' }),
});
export const customerList = listEnvelope(customerSchema, 'CustomerList');

export const documentSchema = z
  .object({
    id: idField('doc'),
    type: z.enum(documentTypeKeys).meta({ description: 'The KYC item it was uploaded for.' }),
    status: z
      .enum(['submitted', 'approved', 'rejected'])
      .meta({ description: '`submitted` until reviewed.' }),
    file_name: z.string().meta({ description: 'The name the file was uploaded with.' }),
    content_type: z
      .enum(['application/pdf', 'image/jpeg', 'image/png'])
      .meta({ description: 'As judged from the file’s bytes, not its name.' }),
    size_bytes: z.int().meta({ description: 'Its size (at most 10 MiB).' }),
    sha256: z
      .string()
      .meta({ description: 'SHA-256 of its bytes, hex: check a download against it.' }),
    uploaded_at: z.iso.datetime().meta({ description: 'When it was uploaded.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Document' });

export const uploadFields = z.strictObject({
  type: z.enum(documentTypeKeys),
  file: z.custom<Upload>(
    (value) =>
      typeof value === 'object' && value !== null && Buffer.isBuffer((value as Upload).bytes),
    'Attach one file as `file`.',
  ),
});
export const uploadDocumentation = z
  .strictObject({
    type: z.enum(documentTypeKeys).meta({
      description:
        'A document item of the customer’s `kyc` that is `pending` or `pending_resubmission`; another document type is 409 `invalid_state`.',
    }),
    file: z
      .string()
      .min(1)
      .max(UPLOAD_LIMIT_BYTES)
      .meta({ format: 'binary', description: 'PDF, JPEG or PNG, 1 byte to 10 MiB.' }),
  })
  .meta({ id: 'DocumentUpload' });

export const documentParams = customerParams.extend({
  document_id: pathId('doc', 'document_not_found'),
});
export const documentListQuery = listQuery('doc', ['created_at']);
export const documentList = listEnvelope(documentSchema, 'DocumentList');

export const biometricsSessionSchema = z
  .object({
    session_url: z
      .url()
      .meta({ description: 'A page of this service where the customer completes the capture.' }),
    expires_at: z.iso
      .datetime()
      .meta({ description: 'After this (15 minutes) the page shows expired; open a new session.' }),
  })
  .meta({ id: 'BiometricsSession' });

const reviewMessage = trimmedText(1000)
  .optional()
  .meta({ description: 'Why, shown to the customer as the item’s `message`.' });
const reviewDecisionText =
  '`approve` or `reject` a submitted item; `request_correction` asks for a field to be corrected.';
/** A decision on an item: approving or rejecting names any item type, a correction a field. */
const reviewItem = z.discriminatedUnion('decision', [
  z.strictObject({
    type: z.enum(kycItemTypes).meta({ description: 'The item decided.' }),
    decision: z
      .enum(['approve', 'reject'] as const satisfies readonly ReviewDecision[])
      .meta({ description: reviewDecisionText }),
    message: reviewMessage,
  }),
  z.strictObject({
    type: z.enum(correctableFieldKeys).meta({ description: 'The field to correct.' }),
    decision: z
      .literal('request_correction' satisfies ReviewDecision)
      .meta({ description: reviewDecisionText }),
    message: reviewMessage,
  }),
]);
export const reviewBody = z
  .strictObject({
    items: z
      .array(reviewItem)
      .min(1)
      .max(20)
      .meta({ description: 'One decision per item, applied together.' }),
  })
  .meta({ id: 'ReviewRequest' });

export const denyBody = z
  .strictObject({
    reason: trimmedText(1000).meta({
      description: 'Why (sent in `customer.denied`); the denial is final.',
    }),
  })
  .meta({ id: 'DenyRequest' });
