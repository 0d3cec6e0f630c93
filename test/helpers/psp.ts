import { randomBytes } from 'node:crypto';
import { DEVELOPMENT_PSP_WEBHOOK_SECRET } from '../../src/config.js';
import { signPspBody } from '../../src/domain/pix/psp-signature.js';

/** An end-to-end id as a payer's PSP makes them: `E`, an ISPB, a UTC minute, 11 characters. */
export const endToEndId = () =>
  `E12345678${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 12)}${randomBytes(8).toString('hex').slice(0, 11)}`;

/** `centavos` as the Pix API writes an amount: reais with two decimals. */
export const valor = (centavos: number) =>
  `${Math.trunc(centavos / 100)}.${String(centavos % 100).padStart(2, '0')}`;

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The PSP's notification (`POST /psp/v1/pix`): `body` as sent, signed (by default) as §14 says. */
export const notifyPsp = (
  baseUrl: string,
  body: string,
  signature: string | null = signPspBody(DEVELOPMENT_PSP_WEBHOOK_SECRET, body, nowSeconds()),
  contentType = 'application/json',
) =>
  fetch(`${baseUrl}/psp/v1/pix`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...(signature ? { 'pix-signature': signature } : {}) },
    body,
  });
