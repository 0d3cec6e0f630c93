import { randomInt } from 'node:crypto';
import { createStaticPix, hasError, isStaticPix, parsePix } from 'pix-utils';
import { toBuffer } from 'qrcode';

/**
 * Pix BR Codes ("copia e cola") for charges (contract §14): a static code with the lender's key,
 * the amount and the charge's `txid`, built and parsed by pix-utils (which computes and checks the
 * CRC16-CCITT), and its QR image. The limits below are the BR Code's, from Banco Central's
 * "Manual de Padrões para Iniciação do Pix" (the EMV data objects of a static code): merchant name
 * (59) at most 25 characters, merchant city (60) at most 15, the key (26-01) at most 77 (the
 * longest key, an e-mail, so that field 26 stays within its 99), the amount (54) at most 13
 * characters with a point before the centavos, and a static code's txid (62-05) 1 to 25 letters
 * and digits.
 *
 * Not for workflow code: it imports node:crypto, and pix-utils loads axios (for dynamic codes'
 * payload URLs, which this module never fetches) when it is imported.
 */
export interface BrCodeFields {
  pixKey: string;
  merchantName: string;
  merchantCity: string;
  /** Integer centavos, > 0. */
  amount: number;
  txid: string;
}

const limits = { merchantName: 25, merchantCity: 15, pixKey: 77 } as const;
/** Field 54 holds up to 13 characters: ten digits of reais, the point, two of centavos. */
const maxAmount = 999_999_999_999;
const TXID = /^[A-Za-z0-9]{1,25}$/;
/** A key as it is written in the code: printable ASCII without spaces. */
const PIX_KEY = /^[\x21-\x7e]+$/;
const AMOUNT = /^(\d+)(?:\.(\d{1,2}))?$/;
const txidAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The static BR Code of a charge. Names are cut to the code's limits, never refused for length. */
export function brCode(fields: BrCodeFields): string {
  const amount = reaisText(fields.amount);
  if (!TXID.test(fields.txid))
    throw new Error(`a Pix txid is 1 to 25 letters and digits, not ${JSON.stringify(fields.txid)}`);
  if (fields.pixKey.length > limits.pixKey || !PIX_KEY.test(fields.pixKey))
    throw new Error('a Pix key is 1 to 77 printable characters without spaces');
  const merchantName = brCodeText(fields.merchantName, limits.merchantName, 'merchant name');
  const merchantCity = brCodeText(fields.merchantCity, limits.merchantCity, 'merchant city');

  const pix = createStaticPix({
    pixKey: fields.pixKey,
    merchantName,
    merchantCity,
    txid: fields.txid,
    // The library takes reais as a JS number and writes it with toFixed(2). The number is parsed
    // from the decimal string built from the integer centavos (no arithmetic on a float), and any
    // such string of at most 13 characters parses to the double nearest it, which toFixed(2)
    // prints back as the same digits; the check below holds the library to that.
    transactionAmount: Number(amount),
  });
  if (hasError(pix)) throw new Error(`pix-utils refused the BR Code: ${pix.message}`);
  const code = pix.toBRCode();
  if (topLevelField(code, '54') !== amount)
    throw new Error(`pix-utils wrote an amount other than ${amount}`);
  return code;
}

/**
 * The fields of a static BR Code with an amount and a txid, as `brCode` issues them. The library
 * checks the structure and the CRC; the amount is read from the digits of field 54, not from the
 * library's float.
 */
export function parseBrCode(code: string): BrCodeFields {
  const pix = parsePix(code);
  if (hasError(pix)) throw new Error(`not a valid Pix BR Code: ${pix.message}`);
  if (!isStaticPix(pix)) throw new Error('not a static Pix BR Code');
  const amountText = topLevelField(code, '54');
  if (amountText === undefined) throw new Error('the Pix BR Code carries no amount');
  const amount = centavosOf(amountText);
  const txid = pix.txid ?? '';
  // `***` is the Manual's "no txid", which no charge is matched by.
  if (!TXID.test(txid)) throw new Error('the Pix BR Code carries no txid');
  return {
    pixKey: pix.pixKey,
    merchantName: pix.merchantName,
    merchantCity: pix.merchantCity,
    amount,
    txid,
  };
}

/** A fresh txid: 25 characters of [A-Za-z0-9] drawn uniformly (randomInt rejects biased draws). */
export function newTxid(): string {
  let txid = '';
  for (let i = 0; i < 25; i++) txid += txidAlphabet[randomInt(txidAlphabet.length)];
  return txid;
}

/** The QR image of a code: PNG, error correction M (a code printed on paper survives a smudge). */
export function qrPng(code: string): Promise<Buffer> {
  return toBuffer(code, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 360 });
}

/** Integer centavos as field 54 writes them (`1234.56`), by string work on the digits. */
function reaisText(centavos: number): string {
  if (!Number.isSafeInteger(centavos) || centavos <= 0 || centavos > maxAmount)
    throw new RangeError(
      `a Pix amount is a whole number of centavos from 1 to ${maxAmount}, not ${centavos}`,
    );
  const digits = String(centavos).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** Field 54's decimal string of reais as integer centavos, from its digits (no float). */
function centavosOf(text: string): number {
  const match = AMOUNT.exec(text);
  if (!match || text.length > 13) throw new Error(`not a Pix amount: ${JSON.stringify(text)}`);
  const centavos = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (centavos <= 0) throw new Error('the Pix BR Code carries no amount');
  return centavos;
}

/**
 * A name or city as the BR Code takes it: accents stripped, upper case, printable ASCII only
 * (anything else, such as a CJK character, is dropped), spaces collapsed, cut to the limit.
 */
function brCodeText(text: string, limit: number, what: string): string {
  const ascii = text
    .toUpperCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/\s/g, ' ')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  const cut = ascii.slice(0, limit).trimEnd();
  if (cut === '') throw new Error(`the ${what} of a Pix BR Code is empty`);
  return cut;
}

/** The value of a top-level EMV field (2-digit id, 2-digit length, value) of a well-formed code. */
function topLevelField(code: string, id: string): string | undefined {
  let at = 0;
  while (at + 4 <= code.length) {
    const lengthText = code.slice(at + 2, at + 4);
    if (!/^\d{2}$/.test(lengthText)) return undefined;
    const length = Number(lengthText);
    if (code.slice(at, at + 2) === id) return code.slice(at + 4, at + 4 + length);
    at += 4 + length;
  }
  return undefined;
}
