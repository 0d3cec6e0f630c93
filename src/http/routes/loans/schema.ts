import { z } from 'zod';
import { entryDirections, ledgerAccounts } from '../../../domain/ledger/postings.js';
import {
  accountNumberPattern,
  bankAccountTypes,
  bankCodePattern,
  branchPattern,
  parsePixKey,
  pixKeyTypes,
} from '../../../domain/loans/disbursement-account.js';
import {
  installmentStatuses,
  disbursementStatuses,
  loanStatuses,
  loanTransactionTypes,
  MAX_EXTRA_SIGNERS,
} from '../../../domain/loans/loans.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';
import { trimmedText } from '../../text.js';
import { scheduleRowSchema } from '../credit-offers/schema.js';
import { cpf, email, name } from '../customers/schema.js';

const centavos = (description: string) => z.int().min(0).meta({ description });
/** A payment's part (null on other transactions and on payments recorded before §13). */
const centavosOrNull = (description: string) => z.int().nullable().meta({ description });
const instant = (description: string) => z.iso.datetime().meta({ description });

const pixAccount = z
  .strictObject({
    type: z.literal('pix').meta({ description: 'Pay by Pix to a key.' }),
    // No length bounds in the document: each kind has its own (parsePixKey checks them), and a
    // string of the right length is not yet a key.
    pix_key: z
      .string()
      .transform(
        (value, ctx) =>
          parsePixKey(value) ??
          (ctx.addIssue({
            code: 'custom',
            params: { code: 'invalid_format' },
            message:
              'Not a pix key: a cpf, a cnpj, an e-mail, a Brazilian phone in E.164 (+5511…) or a random key (UUID).',
          }),
          z.NEVER),
      )
      .meta({
        description:
          'A cpf or cnpj (check digits verified), an e-mail, a Brazilian phone in E.164 (`+5511987654321`) or a random key (UUID). Answered normalized, with `pix_key_type`.',
        format: 'pix-key',
        example: '+5511987654321',
      }),
  })
  .transform(({ pix_key }) => ({
    type: 'pix' as const,
    pix_key: pix_key.key,
    pix_key_type: pix_key.type,
  }));

const bankAccount = z.strictObject({
  type: z.literal('bank_account').meta({ description: 'Pay by transfer to a bank account.' }),
  bank_code: z.string().regex(bankCodePattern).meta({
    description: 'The bank’s three-digit COMPE code.',
    example: '341',
  }),
  branch: z.string().regex(branchPattern).meta({
    description: 'Branch (agência), 1–4 digits, without its check digit.',
    example: '0001',
  }),
  account_number: z.string().regex(accountNumberPattern).meta({
    description: 'Account number with its check digit after a hyphen.',
    example: '12345-6',
  }),
  account_type: z
    .enum(bankAccountTypes)
    .meta({ description: '`checking` (corrente), `savings` (poupança) or `payment` (pagamento).' }),
});

export const createLoanBody = z
  .strictObject({
    credit_offer_id: idField('co').meta({
      description: 'The `available` offer the loan is taken from (it becomes `accepted`).',
    }),
    simulation_id: idField('sim').meta({
      description:
        'A simulation of that offer, still within its `valid_until`: the loan takes its amounts and schedule.',
    }),
    disbursement_account: z.discriminatedUnion('type', [pixAccount, bankAccount]).meta({
      description: 'Where the money goes: a pix key, or a bank account.',
    }),
    signers: z
      .array(
        z.strictObject({
          name: name.meta({ description: 'The signer’s full name, as in the contract.' }),
          cpf: cpf.meta({
            description: 'The signer’s cpf: how they identify on the signing page.',
          }),
          email: email.meta({ description: 'Where the signer’s one-time code is sent.' }),
        }),
      )
      .max(MAX_EXTRA_SIGNERS)
      .superRefine((signers, ctx) => {
        const seen = new Set<string>();
        signers.forEach((signer, index) => {
          if (seen.has(signer.cpf))
            ctx.addIssue({
              code: 'custom',
              params: { code: 'duplicate' },
              path: [index, 'cpf'],
              message: 'Each signer needs a distinct cpf.',
            });
          seen.add(signer.cpf);
        });
      })
      .optional()
      .meta({
        description: `Up to ${MAX_EXTRA_SIGNERS} signers besides the customer (a guarantor, a partner of the business), with distinct cpfs other than the customer’s.`,
      }),
    refinances: z.array(idField('ln')).optional().meta({
      description:
        'Contract §17: the customer’s `active` loans this loan pays off at its release (1–5, each once; see docs/refinancing.md). The offer is then the one the refinanced loan accepted, its simulation priced for the refinancing, and its requested amount covers their payoff on its release date; only the rest reaches `disbursement_account`.',
    }),
  })
  .meta({ id: 'CreateLoanRequest' });

export const cancelLoanBody = z
  .strictObject({
    reason: trimmedText(500).optional().meta({
      description: 'Why, kept as the loan’s `cancellation_reason` (`requested` when none).',
    }),
  })
  .meta({ id: 'CancelLoanRequest' });

export const signLoanBody = z.strictObject({ cpf }).meta({ id: 'SignLoanRequest' });

export const disbursementBody = z
  .strictObject({
    outcome: z.enum(['confirmed', 'failed']).meta({
      description: '`confirmed`: the money arrived (`active`); `failed`: it did not (`error`).',
    }),
    reason: trimmedText(500)
      .optional()
      .meta({ description: 'Why it failed (kept in the loan’s `error`).' }),
  })
  .meta({ id: 'DisbursementRequest' });

const paidAt = z.iso.datetime({ offset: true }).meta({
  description:
    'When the money arrived (RFC 3339): not in the future, nor before the loan’s latest payment. Default: when the loan books it, after any payment sent before it (so payments sent together are all booked, in turn).',
});

const paymentReference = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/,
    'Printable ASCII, no leading or trailing space.',
  )
  .meta({
    description:
      'The payment’s identity, unique per loan (for a Pix, its end-to-end id): sent again with the same amount and `paid_at`, it answers the loan and records nothing; with anything else, 409 `payment_reference_conflict`.',
    example: 'E12345678202611251200abcdef01234',
  });

const applyTo = z.enum(['next', 'last']).meta({
  description:
    'Where money left after the rows already due goes: `next` (default) pays the oldest pending rows first; `last` pays the newest first, shortening the term. Rows not yet due are paid at their present value (CDC art. 52 §2).',
});

const paymentAmount = z.int().min(1).max(100_000_000_000).meta({
  description:
    'Centavos: any amount up to the payoff amount of the day of `paid_at` (422 naming it above that). Allocated to overdue rows (late interest, late fee, installment), then to pending rows by `apply_to`.',
});

export const paymentBody = z
  .strictObject({
    amount: paymentAmount,
    reference: paymentReference,
    paid_at: paidAt.optional(),
    apply_to: applyTo.optional(),
  })
  .meta({ id: 'PaymentRequest' });

export const sandboxPaymentBody = z
  .strictObject({
    amount: paymentAmount.optional().meta({
      description:
        'Centavos; defaults to what the oldest unpaid installment owes on the day of `paid_at`. Any amount up to the payoff amount.',
    }),
    reference: paymentReference.optional().meta({
      description: 'As in production; a fresh one is made when none is sent.',
    }),
    paid_at: paidAt.optional(),
    apply_to: applyTo.optional(),
  })
  .meta({ id: 'SandboxPaymentRequest' });

export const refundBody = z
  .strictObject({
    amount: z.int().min(1).max(100_000_000_000).meta({
      description: 'Centavos sent back, at most the loan’s `refund_due_amount`.',
    }),
    reference: paymentReference.meta({
      description:
        'The refund’s identity, unique per loan among its transactions (the returned Pix’s id, say).',
      example: 'D12345678202611251200abcdef01234',
    }),
  })
  .meta({ id: 'RefundRequest' });

export const payoffBody = z
  .strictObject({ reference: paymentReference, paid_at: paidAt.optional() })
  .meta({ id: 'PayoffRequest' });

export const sandboxPayoffBody = z
  .strictObject({
    reference: paymentReference.optional().meta({
      description: 'As in production; a fresh one is made when none is sent.',
    }),
    paid_at: paidAt.optional(),
  })
  .meta({ id: 'SandboxPayoffRequest' });

export const payoffQuery = z.strictObject({
  date: z.iso.date().optional().meta({
    description:
      'The settlement date (YYYY-MM-DD, America/Sao_Paulo): today by default, at most 30 days ahead.',
  }),
});

const payoffRowsSchema = (description: string) =>
  z
    .array(
      z.object({
        number: z.int().min(1).meta({ description: 'The installment’s number.' }),
        due_date: z.iso.date().meta({ description: 'Its due date.' }),
        amount_due: centavos('The installment (plus late charges for a row already due).'),
        present_value: centavos(
          'Its value on `date`, discounted at the contract rate on calendar days.',
        ),
      }),
    )
    .meta({ description });

export const payoffSchema = z
  .object({
    loan_id: idField('ln'),
    date: z.iso.date().meta({ description: 'The settlement date quoted.' }),
    payoff_amount: centavos(
      'What settles every unpaid installment on `date` (with an agreement taking payments, its rows’ and the uncovered ones’).',
    ),
    discount_amount: centavos('The interest forgone: the rows’ amounts due minus the payoff.'),
    rows: payoffRowsSchema(
      'Each unpaid installment of the loan, and what it counts for on `date` (with an agreement taking payments, the ones it does not cover).',
    ),
    agreement: z
      .object({
        id: idField('agr'),
        payoff_amount: centavos('What settles the agreement’s rows on `date`.'),
        rows: payoffRowsSchema('Each unpaid row of the agreement (its own numbers).'),
      })
      .nullable()
      .meta({
        description:
          'The payment agreement taking payments (`pending_entry`, `active`; contract §17): its rows stand for the ones it covers, and a payment reaches them first. Null when none does.',
      }),
  })
  .meta({ id: 'LoanPayoff' });

export const loanParams = z.object({ loan_id: pathId('ln', 'loan_not_found') });

const disbursementAccountSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('pix').meta({ description: 'Paid by Pix to a key.' }),
      pix_key: z.string().meta({ description: 'The key, normalized.' }),
      pix_key_type: z
        .enum(pixKeyTypes)
        .meta({ description: 'What kind of key it is (`evp`: a random key).' }),
    }),
    bankAccount.extend({}).strip(),
  ])
  .meta({ id: 'DisbursementAccount' });

export const loanSchema = z
  .object({
    id: idField('ln'),
    customer_id: idField('cust'),
    credit_offer_id: idField('co'),
    simulation_id: idField('sim'),
    status: z.enum(loanStatuses).meta({
      description:
        '`awaiting_signatures` → `processing` (the money is being sent) → `active` (repayment) → `finished`; or `cancelled` (unsigned in time, cancelled, withdrawn) or `error` (the disbursement failed).',
    }),
    currency: z.literal('BRL'),
    requested_amount: centavos('What the customer receives.'),
    iof_amount: centavos('IOF, financed.'),
    principal_amount: centavos('The amount financed: requested plus IOF.'),
    installments: z.int().min(1).meta({ description: 'How many monthly installments.' }),
    installment_amount: centavos('The regular installment (the last may differ by centavos).'),
    monthly_interest_rate: z
      .number()
      .min(0)
      .meta({ description: 'The offer’s monthly rate, as a fraction (0.0299 is 2.99 % a month).' }),
    cet_annual: z.number().min(0).meta({ description: 'CET a year (Res. CMN 4.881/2020).' }),
    first_due_date: z.iso.date().meta({ description: 'The first installment’s due date.' }),
    release_date: z.iso.date().meta({
      description:
        'The day the money is released (São Paulo): the simulation’s until the disbursement, then the day it was confirmed. Interest counts from it.',
    }),
    release_adjustment: z
      .object({
        priced_release_date: z.iso
          .date()
          .meta({ description: 'The release date the simulation priced.' }),
        interest_credit_amount: centavos('Row 1’s interest for the days without the money.'),
        iof_credit_amount: centavos('The financed IOF of those days.'),
        row1_installment_before: centavos('Row 1 as priced.'),
        row1_installment_after: centavos('Row 1 as released: lower by both credits.'),
      })
      .nullable()
      .meta({
        description:
          'What a disbursement confirmed later than the simulation’s release date took off row 1 (contract §13); null when released on the date priced.',
      }),
    disbursement_status: z.enum(disbursementStatuses).meta({
      description:
        '`pending` until ops claim the payout (`claimed`: the partner can no longer cancel), then `confirmed` or `failed`.',
    }),
    contract_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .meta({ description: 'SHA-256 of the contract PDF (`GET /loans/{id}/contract`).' }),
    signing_url: z.url().meta({
      description: 'The hosted page where each signer reads the contract and signs with their cpf.',
    }),
    signatures_required: z
      .int()
      .min(1)
      .meta({ description: 'The customer plus the extra signers.' }),
    signatures_received: z.int().min(0).meta({ description: 'How many have signed so far.' }),
    signers: z
      .array(
        z.object({
          name: z.string().meta({ description: 'As in the contract.' }),
          cpf: z.string().meta({ description: '11 digits.' }),
          signed_at: z.iso
            .datetime()
            .nullable()
            .meta({ description: 'When they signed (null: not yet).' }),
        }),
      )
      .meta({ description: 'Who signs the contract: the customer first, then the extra signers.' }),
    disbursement_account: disbursementAccountSchema.meta({
      description: 'Where the money goes (or went).',
    }),
    disbursed_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When the money reached the borrower (null: not yet).' }),
    outstanding_amount: centavos(
      'What is left of the unpaid installments, at face value; 0 once `cancelled` (a withdrawn loan owes nothing more) or in `error`.',
    ),
    overdue_amount: centavos('Sum of the overdue installments’ `amount_due` today.'),
    days_overdue: z.int().min(0).meta({
      description: 'Days since the due date of the oldest overdue installment (0 when none is).',
    }),
    paid_installments: z.int().min(0).meta({ description: 'How many rows are paid in full.' }),
    next_due_date: z.iso
      .date()
      .nullable()
      .meta({ description: 'Due date of the oldest unpaid installment while `active`.' }),
    schedule: z
      .array(
        scheduleRowSchema.extend({
          status: z.enum(installmentStatuses).meta({
            description:
              '`pending`, `overdue` (unpaid after its due date), `paid`, or `renegotiated` (an active payment agreement covers it: no late charges; the agreement’s rows are what the loan owes for it).',
          }),
          amount_due: centavos(
            'What the row owes today: what is left of its installment, plus late charges once late; 0 once paid, while `renegotiated`, and on a loan `cancelled` or in `error`.',
          ),
          paid_amount: centavos(
            'What the row has received: installment parts (at their value when paid) and late charges.',
          ),
          paid_at: z.iso
            .datetime({ offset: true })
            .nullable()
            .meta({ description: 'When the payment that completed the row was made.' }),
        }),
      )
      .meta({ description: 'Every installment, first to last, and where it stands today.' }),
    error: z
      .object({
        code: z.literal('disbursement_failed').meta({ description: 'What failed.' }),
        message: z.string().meta({ description: 'Why, as ops or the sandbox reported it.' }),
      })
      .nullable()
      .meta({ description: 'Why the loan ended in `error`.' }),
    cancellation_reason: z.string().nullable().meta({
      description:
        '`signature_deadline`, `release_window_passed`, `withdrawal` (CDC art. 49), `payout_returned` (the receiving bank gave the disbursement back; what was paid is due back), `refinanced_loan_changed` (a loan it refinances was paid or changed before the release, contract §17: simulate again), or the reason given to `POST /loans/{id}/cancel`.',
    }),
    refund_due_amount: centavos(
      'Money received that belongs back to the borrower (a Pix above the payoff amount, after the loan ended, beyond a withdrawal), less what was sent back.',
    ),
    finished_reason: z.enum(['refinanced']).nullable().meta({
      description:
        'Why a `finished` loan finished otherwise than repaid by its borrower: `refinanced` (paid off by a new loan’s release, contract §17); null otherwise.',
    }),
    written_off_at: z.iso.datetime().nullable().meta({
      description:
        'When the loan was written off (a row overdue more than the lender’s write-off period, 360 days by default): an accounting step, with event `loan.written_off`. The loan stays `active` and what the borrower owes is unchanged; null until then.',
    }),
    assignment_id: z.string().nullable().meta({
      description:
        'The assignment (`asg_…`) that sold the loan to `assigned_to` (contract §19), with event `loan.assigned`; null while the lender holds it.',
    }),
    assigned_to: z
      .object({
        name: z.string().meta({ description: 'The buyer’s legal name.' }),
        cnpj: z.string().meta({ description: 'The buyer’s CNPJ (14 characters).' }),
      })
      .nullable()
      .meta({
        description:
          'Who bought the loan (a fund or another institution). The lender keeps servicing it: the borrower pays as before, and owes exactly what it owed; null while the lender holds it.',
      }),
    created_at: instant('When the loan was created.'),
    updated_at: instant('When the loan last changed.'),
  })
  .meta({ id: 'Loan' });

export const loanListQuery = listQuery('ln', ['created_at'], {
  customer_id: idField('cust').optional().meta({ description: 'Only this customer’s loans.' }),
  status: z.enum(loanStatuses).optional().meta({ description: 'Only loans in this status.' }),
});
export const loanList = listEnvelope(loanSchema, 'LoanList');

const transactionActor = z.object({
  type: z.enum(['operator', 'partner', 'system']).meta({ description: 'Who: staff (`operator`).' }),
  id: z.string().meta({ description: 'The operator (`op_…`, or `break_glass`).' }),
});

export const loanTransactionSchema = z
  .object({
    id: idField('txn'),
    loan_id: idField('ln'),
    type: z.enum(loanTransactionTypes).meta({
      description:
        'What moved: the `disbursement`, a `payment`, a `payoff`, a `withdrawal`, a `refund`, `payout_returned` (a production loan’s disbursement came back: the loan undone, what was paid due back), `write_off`, or `refinancing` (contract §17: the loan paid off by a new loan’s release, from `refinancing_clearing`; no money moved).',
    }),
    amount: centavos('The money that moved, in centavos.'),
    currency: z.literal('BRL'),
    installment_number: z.int().min(1).nullable().meta({
      description: 'The one row a payment recorded before any-amount payments paid.',
    }),
    reference: z.string().nullable().meta({ description: 'A payment’s identity (see payments).' }),
    principal_amount: centavosOrNull('What a payment paid of the principal.'),
    interest_amount: centavosOrNull('What a payment paid of the contract interest.'),
    late_fee_amount: centavosOrNull('What a payment paid of late fees.'),
    late_interest_amount: centavosOrNull('What a payment paid of late interest.'),
    discount_amount: centavosOrNull(
      'The interest not charged because rows were paid before their due dates (CDC art. 52 §2).',
    ),
    refund_amount: centavosOrNull(
      'The part of the money received that is due back to the borrower (`refunds_payable`).',
    ),
    allocation: z
      .array(
        z.object({
          installment_number: z.int().min(1).meta({ description: 'The row paid.' }),
          installment_amount: centavos('Cash to the installment.'),
          late_fee_amount: centavos('Cash to the late fee.'),
          late_interest_amount: centavos('Cash to late interest.'),
          discount_amount: centavos('The interest not charged on this row.'),
        }),
      )
      .nullable()
      .meta({ description: 'What a payment paid of each row, in the order it paid them.' }),
    entries: z
      .array(
        z.object({
          account: z.enum(ledgerAccounts).meta({ description: 'The ledger account.' }),
          direction: z.enum(entryDirections).meta({ description: '`debit` or `credit`.' }),
          amount: z.int().min(1).meta({ description: 'Centavos.' }),
        }),
      )
      .meta({
        description:
          'The double-entry lines it posted: debits equal credits. A disbursement debits `loan_principal` and credits `disbursement_clearing` (the requested amount) and `iof_payable`; a payment debits `collections_clearing` and credits the principal, interest and late charges it paid (a discount is interest not earned: no entry), and `refunds_payable` with what the loan did not owe; a withdrawal also closes `loan_principal`, reverses the IOF and takes the interest and late charges paid back out of income; a refund debits `refunds_payable` and credits `disbursement_clearing`. Empty on transactions recorded before the ledger.',
      }),
    recorded_by: transactionActor
      .nullable()
      .meta({ description: 'The operator who recorded it by hand; null: the service did.' }),
    approved_by: transactionActor.nullable().meta({
      description: 'The second operator who approved it (dual control); null: none needed.',
    }),
    occurred_at: instant('When the money moved.'),
    created_at: instant('When it was recorded.'),
  })
  .meta({ id: 'LoanTransaction' });

export const loanTransactionListQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(100)
    .meta({ description: 'Page size, 1 to 100 (100 by default: a loan’s whole ledger at once).' }),
  starting_after: idField('txn')
    .optional()
    .meta({ description: 'The `id` of the last item of the previous page.' }),
});
export const loanTransactionList = listEnvelope(loanTransactionSchema, 'LoanTransactionList');
