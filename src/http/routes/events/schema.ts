import { agreementSchema } from '../agreements/schema.js';
import { z } from 'zod';
import { eventCatalogue, type EventType } from '../../../domain/webhooks/catalogue.js';
import { idField } from '../../ids.js';
import { chargeSchema } from '../charges/schema.js';
import { installmentReminderSchema } from '../collections/schema.js';
import { creditOfferSchema } from '../credit-offers/schema.js';
import { customerSchema } from '../customers/schema.js';
import { loanSchema } from '../loans/schema.js';

const actorSchema = z
  .object({
    type: z
      .enum(['operator', 'partner', 'system'])
      .meta({ description: 'Who: staff (`operator`).' }),
    id: z.string().meta({ description: 'The operator (`op_…`) or `break_glass`.' }),
  })
  .meta({ id: 'Actor' });

const customerRef = {
  id: idField('cust'),
  external_id: z
    .string()
    .nullable()
    .meta({ description: 'Your own id of the customer, as registered.' }),
};

const centavos = (description: string) =>
  z.int().meta({ description: `${description} (centavos).` });

/** What a payment paid, as `loan.payment_received` tells it. */
const paymentReceived = z
  .object({
    amount: centavos('The money received'),
    paid_at: z.iso.datetime().meta({ description: 'When the borrower paid.' }),
    reference: z.string().optional().meta({
      description: 'The payment’s identity: yours, or the Pix end-to-end id.',
    }),
    apply_to: z.enum(['next', 'last']).optional().meta({
      description: 'Which end of the schedule it paid from: `next` (oldest first) or `last`.',
    }),
    installment_number: z.int().nullable().meta({
      description: 'The row paid, for payments made before partial payments (else null).',
    }),
    principal_amount: centavos('Principal paid').optional(),
    interest_amount: centavos('Interest paid').optional(),
    late_fee_amount: centavos('Late fee paid').optional(),
    late_interest_amount: centavos('Late interest paid').optional(),
    discount_amount: centavos('Interest not charged for paying early').optional(),
  })
  .meta({ id: 'PaymentReceived' });

const refund = z
  .object({
    amount: centavos('The amount'),
    reference: z.string().meta({ description: 'The Pix that brought it, or the refund’s own.' }),
  })
  .meta({ id: 'Refund' });

/** The payload (`data`) of each event type: the record as the API shows it, and what moved. */
const dataOf = {
  'customer.created': customerSchema
    .omit({ kyc: true, created_at: true, updated_at: true })
    .meta({ id: 'CustomerCreatedData' }),
  'customer.under_review': z
    .object({
      ...customerRef,
      status: z.literal('under_review').meta({ description: 'Its new status.' }),
    })
    .meta({ id: 'CustomerStatusData' }),
  'customer.kyc_updated': z
    .object({ ...customerRef, status: customerSchema.shape.status, kyc: customerSchema.shape.kyc })
    .meta({ id: 'CustomerKycData' }),
  'customer.active': z
    .object({
      ...customerRef,
      status: z.literal('active').meta({ description: 'Its new status.' }),
    })
    .meta({ id: 'CustomerActiveData' }),
  'customer.denied': z
    .object({
      ...customerRef,
      status: z.literal('denied').meta({ description: 'Its new status (final).' }),
      reason: z.string().nullable().meta({ description: 'Why, as the reviewer wrote it.' }),
    })
    .meta({ id: 'CustomerDeniedData' }),
  'customer.erased': z
    .object({
      id: idField('cust'),
      erased_at: z.iso.datetime().meta({ description: 'When its personal data was erased.' }),
      retained_until: z.iso.datetime().nullable().meta({
        description:
          'Until when the contracts and ledger of its loans are kept (null: it had none). Read the customer: 410 `customer_erased`.',
      }),
      loan_ids: z
        .array(idField('ln'))
        .meta({ description: 'Its loans, still readable while kept.' }),
    })
    .meta({ id: 'CustomerErasedData' }),
  'credit_offer.available': creditOfferSchema,
  'credit_offer.expired': creditOfferSchema,
  'credit_offer.accepted': creditOfferSchema,
  'credit_offer.cancelled': creditOfferSchema,
  'loan.created': loanSchema,
  'loan.signature_received': loanSchema,
  'loan.processing': loanSchema,
  'loan.active': loanSchema,
  'loan.payment_received': loanSchema
    .extend({ payment: paymentReceived.meta({ description: 'What the payment paid.' }) })
    .meta({ id: 'LoanPaymentReceivedData' }),
  'loan.installment_overdue': loanSchema
    .extend({
      installment: z
        .object({
          number: z.int().min(1).meta({ description: 'The installment’s number.' }),
          due_date: z.iso.date().meta({ description: 'The due date it passed.' }),
          amount_due: centavos('What the row asks for now, late charges included'),
        })
        .meta({ description: 'The row that became overdue.' }),
    })
    .meta({ id: 'LoanInstallmentOverdueData' }),
  'loan.finished': loanSchema,
  'loan.cancelled': loanSchema,
  'loan.error': loanSchema,
  'loan.refund_due': loanSchema
    .extend({ refund: refund.meta({ description: 'What is due back to the borrower.' }) })
    .meta({ id: 'LoanRefundDueData' }),
  'loan.refund_sent': loanSchema
    .extend({ refund: refund.meta({ description: 'What was sent back.' }) })
    .meta({ id: 'LoanRefundSentData' }),
  'loan.written_off': loanSchema,
  'loan.assigned': loanSchema,
  'loan.agreement_created': agreementSchema,
  'loan.agreement_accepted': agreementSchema,
  'loan.agreement_active': agreementSchema,
  'loan.agreement_lapsed': agreementSchema,
  'loan.agreement_broken': agreementSchema,
  'loan.agreement_fulfilled': agreementSchema,
  'charge.created': chargeSchema,
  'charge.paid': chargeSchema,
  'charge.expired': chargeSchema,
  'charge.cancelled': chargeSchema,
  'installment.reminder': installmentReminderSchema,
} as const satisfies Record<EventType, z.ZodType>;

/** What each event type means, for the document's `webhooks` and the SDK. */
export const eventMeanings: Record<EventType, string> = {
  'customer.created': 'A customer was registered; its KYC begins.',
  'customer.under_review': 'Every KYC item is in: the review has begun.',
  'customer.kyc_updated':
    'A KYC item moved (submitted, approved, rejected, a correction asked): read `kyc`.',
  'customer.active': 'KYC passed: offers may follow.',
  'customer.denied': 'The customer is permanently blocked (final).',
  'customer.erased': 'The customer’s personal data was erased on request (LGPD art. 18).',
  'credit_offer.available': 'A pre-approved offer can be simulated and taken.',
  'credit_offer.expired': 'The offer passed `valid_until` untaken.',
  'credit_offer.accepted': 'A loan was created from the offer.',
  'credit_offer.cancelled': 'The offer was withdrawn (the customer denied or erased).',
  'loan.created': 'A loan awaits its signatures (`signing_url`).',
  'loan.signature_received': 'A signer signed the contract.',
  'loan.processing': 'Every signer signed: the money is being sent.',
  'loan.active': 'The money reached the borrower: repayment runs.',
  'loan.payment_received': 'A payment was recorded: `payment` says what it paid.',
  'loan.installment_overdue': 'An installment passed its due date unpaid: `installment`.',
  'loan.finished': 'Everything is paid.',
  'loan.cancelled': 'The loan ended before its money moved (or was withdrawn within 7 days).',
  'loan.error': 'The disbursement failed: `error` says why.',
  'loan.refund_due': 'Money received belongs back to the borrower: `refund`.',
  'loan.refund_sent': 'Money due back was sent: `refund`.',
  'loan.written_off':
    'A row stayed overdue past the lender’s write-off period: `written_off_at` is set; the loan stays `active` and what the borrower owes is unchanged.',
  'loan.assigned':
    'The lender sold the loan (contract §19): `assigned_to` names the buyer. The loan stays as it was for the borrower — same rows, same payments, same servicing.',
  'loan.agreement_created':
    'A payment agreement was made on the loan (the data is the agreement): it awaits the borrower’s acceptance.',
  'loan.agreement_accepted': 'The borrower accepted the agreement: its entry (first row) is due.',
  'loan.agreement_active':
    'The entry was paid: the covered rows are `renegotiated`, the agreement’s rows are what the loan owes for them.',
  'loan.agreement_lapsed':
    'The agreement was not accepted, or its entry not paid, in time: nothing changed on the loan.',
  'loan.agreement_broken':
    'A row of the agreement was overdue more than AGREEMENT_BREAK_DAYS: the loan’s rows came back, less what was paid.',
  'loan.agreement_fulfilled': 'Every row of the agreement was paid.',
  'charge.created': 'A Pix charge (BR Code) was issued.',
  'charge.paid': 'A Pix paid the charge; its payment is recorded on the loan.',
  'charge.expired': 'The charge passed `expires_at` unpaid.',
  'charge.cancelled': 'A newer charge replaced it, or its loan ended.',
  'installment.reminder':
    'A step of your collections schedule reached an unpaid installment: remind the borrower (the e-mail went too if the step has `email`).',
};

/** `Customer.created` → `CustomerCreatedEvent`: the component name of one event type. */
export const componentName = (type: EventType) =>
  `${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}Event`;

/** One event type's envelope: what `GET /v3/events` lists and each webhook delivery's body. */
const variantOf = (type: EventType) =>
  z
    .object({
      id: idField('evt'),
      type: z.literal(type).meta({ description: eventMeanings[type] }),
      timestamp: z.iso.datetime().meta({ description: 'When it happened.' }),
      data: dataOf[type].meta({
        description:
          'The record as the API showed it then (a payment’s, an overdue row’s or a refund’s details beside it).',
      }),
      actor: actorSchema.optional().meta({
        description:
          'Who caused it, when recorded: the operator (`op_…`, or `break_glass`) whose command moved money by hand or erased the customer. Absent: the service or your own request.',
      }),
    })
    .meta({ id: componentName(type), description: eventMeanings[type] });

export const eventVariants = Object.fromEntries(
  eventCatalogue.map((type) => [type, variantOf(type)]),
) as { [T in EventType]: ReturnType<typeof variantOf> };

export const eventSchema = z
  .discriminatedUnion(
    'type',
    eventCatalogue.map((type) => eventVariants[type]) as unknown as [
      ReturnType<typeof variantOf>,
      ...ReturnType<typeof variantOf>[],
    ],
  )
  .meta({
    id: 'Event',
    description:
      'Something that happened, told once per type: `type` says which, and `data` is the record as the API shows it (plus what moved: a payment, an overdue row, a refund). After a customer’s erasure, the personal fields of its events read `[erased]`.',
  });

/**
 * How deliveries are signed and sent, for the document (info and each webhook): Standard
 * Webhooks, as src/webhooks/signature.ts and src/domain/webhooks/schedule.ts do it.
 */
export const webhookDeliveryText = `Each event an endpoint subscribes to is POSTed to its \`url\` as JSON — the same body \`GET /v3/events/{id}\` answers — with three headers (Standard Webhooks):

- \`webhook-id\`: the event id (\`evt_…\`), the same on every attempt: deduplicate on it.
- \`webhook-timestamp\`: Unix seconds of this attempt.
- \`webhook-signature\`: \`v1,<base64>\` entries separated by spaces, each the HMAC-SHA256 of \`{webhook-id}.{webhook-timestamp}.{body}\` under one of the endpoint's secrets (\`whsec_<base64>\`: the key is the base64-decoded part). During a rotation (\`POST /v3/webhooks/endpoints/{id}/secret/rotate\`) the previous secret signs too, so accept the request when any entry matches any secret you hold.

To verify: take the raw body as received (before any JSON parsing), rebuild \`{id}.{timestamp}.{body}\`, compute the HMAC with each secret, compare in constant time with each \`v1,\` entry, and refuse a timestamp more than 5 minutes from your clock (a replay). The \`standardwebhooks\` libraries (JavaScript, Python, Go, Java, …) do exactly this: \`new Webhook(secret).verify(body, headers)\`.

Answer any 2xx within 15 s to acknowledge; 410 disables the endpoint. Anything else is retried at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after the previous attempt (plus up to 10 % jitter; a \`Retry-After\` on 429 or 503 can only lengthen the wait), ten attempts in all. Deliveries of one endpoint are not ordered: order by the event's \`timestamp\`, or read \`GET /v3/events\`.`;
