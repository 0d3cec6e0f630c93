import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The PSP's Pix notifications (contract §14) carry `Pix-Signature: t=<unix seconds>,v1=<hex>`,
 * the hex being HMAC-SHA256 of `<t>.<raw body>` keyed with PSP_WEBHOOK_SECRET. The timestamp is
 * signed with the body so a captured notification cannot be replayed outside the window; several
 * `v1` entries let the PSP sign with an old and a new secret while the secret is rotated.
 */
export type PspSignatureCheck =
  { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'expired' | 'mismatch' };

const TIMESTAMP = /^\d+$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

const hmac = (secret: string, t: number | string, rawBody: string | Buffer): Buffer =>
  createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();

/** The header value for a body signed at `nowSeconds` (tests, the sandbox and the benches). */
export function signPspBody(secret: string, rawBody: string | Buffer, nowSeconds: number): string {
  if (!Number.isSafeInteger(nowSeconds) || nowSeconds < 0)
    throw new RangeError(`not a unix time in seconds: ${nowSeconds}`);
  return `t=${nowSeconds},v1=${hmac(secret, nowSeconds, rawBody).toString('hex')}`;
}

/**
 * Whether `header` signs `rawBody` with `secret` within `windowSeconds` of `nowMs`, either way (a
 * PSP clock a little ahead is as plausible as a delivery a little late). The body must be the
 * bytes received, before any JSON parsing: a re-serialized body would not match.
 */
export function verifyPspSignature(
  header: string | undefined,
  secret: string,
  rawBody: Buffer,
  nowMs: number,
  windowSeconds = 300,
): PspSignatureCheck {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing' };

  let t: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const entry = part.trim();
    const eq = entry.indexOf('=');
    if (eq <= 0) return { ok: false, reason: 'malformed' };
    const key = entry.slice(0, eq).trim();
    const value = entry.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !TIMESTAMP.test(value)) return { ok: false, reason: 'malformed' };
      t = value;
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) return { ok: false, reason: 'malformed' };
      signatures.push(Buffer.from(value, 'hex'));
    }
    // Other keys (a future v2) are ignored, so the PSP can add a scheme before we read it.
  }
  const seconds = Number(t);
  if (t === undefined || signatures.length === 0 || !Number.isSafeInteger(seconds))
    return { ok: false, reason: 'malformed' };

  if (Math.abs(nowMs - seconds * 1000) > windowSeconds * 1000)
    return { ok: false, reason: 'expired' };

  // Signed over the timestamp as written, so `t=0100` is not the signature of `t=100`.
  const expected = hmac(secret, t, rawBody);
  const matches = signatures.some(
    (given) => given.length === expected.length && timingSafeEqual(given, expected),
  );
  return matches ? { ok: true } : { ok: false, reason: 'mismatch' };
}
