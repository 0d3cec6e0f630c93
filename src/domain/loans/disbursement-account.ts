import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { normalizeCnpj, normalizeCpf } from '../customers/tax-ids.js';

/** The kinds of Pix key the Banco Central's DICT knows; `evp` is the random key (a UUID). */
export const pixKeyTypes = ['cpf', 'cnpj', 'email', 'phone', 'evp'] as const;
export type PixKeyType = (typeof pixKeyTypes)[number];

export const bankAccountTypes = ['checking', 'savings', 'payment'] as const;
export type BankAccountType = (typeof bankAccountTypes)[number];

/** Where the loan's money goes, as stored and shown (the pix key normalized, its kind named). */
export type DisbursementAccount =
  | { type: 'pix'; pix_key: string; pix_key_type: PixKeyType }
  | {
      type: 'bank_account';
      bank_code: string;
      branch: string;
      account_number: string;
      account_type: BankAccountType;
    };

/** The longest key of any kind: an e-mail of 77 characters (the DICT's limit). */
const MAX_PIX_KEY_LENGTH = 77;
const evpPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// The DICT's own e-mail rule: at most 77 characters, one @, a dotted domain.
const emailPattern =
  /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * Reads a pix key as the DICT stores it: a cpf or cnpj as digits (check digits verified), an
 * e-mail in lower case, a phone in E.164 (`+55…`, a valid Brazilian number), a random key as a
 * lower-case UUID. Undefined when the text is none of these.
 */
export function parsePixKey(input: string): { key: string; type: PixKeyType } | undefined {
  const text = input.trim();
  if (text.length > MAX_PIX_KEY_LENGTH) return undefined;
  if (/^\+\d+$/.test(text)) {
    const phone = parsePhoneNumberFromString(text);
    return phone?.isValid() && phone.country === 'BR'
      ? { key: phone.number, type: 'phone' }
      : undefined;
  }
  const lower = text.toLowerCase();
  if (evpPattern.test(lower)) return { key: lower, type: 'evp' };
  if (lower.includes('@'))
    return emailPattern.test(lower) ? { key: lower, type: 'email' } : undefined;
  const cpf = /^[\d.\-\s]{11,14}$/.test(text) ? normalizeCpf(text) : undefined;
  if (cpf) return { key: cpf, type: 'cpf' };
  const cnpj = normalizeCnpj(text);
  if (cnpj) return { key: cnpj, type: 'cnpj' };
  return undefined;
}

/** Bank account fields: COMPE code of 3 digits, a branch of 1–4 digits, an account with its check digit. */
export const bankCodePattern = /^\d{3}$/;
export const branchPattern = /^\d{1,4}$/;
export const accountNumberPattern = /^\d{1,12}-[0-9Xx]$/;
