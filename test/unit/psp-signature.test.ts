import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signPspBody, verifyPspSignature } from '../../src/domain/pix/psp-signature.js';

const secret = 'psp-webhook-secret';
const body = Buffer.from(
  '{"pix":[{"endToEndId":"E1234567820261122150000000000001","txid":"chg7Hq2LmN4pR8sT1vW3xY5zA","valor":"1234.56","horario":"2026-11-22T15:00:00Z"}]}',
);
const t = 1_795_000_000;
const at = (seconds: number) => seconds * 1000;
/** The contract's construction, written out independently of the module. */
const v1 = (key: string, timestamp: number | string, raw: Buffer | string) =>
  createHmac('sha256', key).update(`${timestamp}.${raw.toString()}`).digest('hex');

describe('signPspBody and verifyPspSignature', () => {
  it('sign the contract’s `t=<seconds>,v1=<hex HMAC of "<t>.<body>">` and accept it', () => {
    const header = signPspBody(secret, body, t);
    expect(header).toBe(`t=${t},v1=${v1(secret, t, body)}`);
    expect(signPspBody(secret, body.toString(), t)).toBe(header);
    expect(verifyPspSignature(header, secret, body, at(t))).toEqual({ ok: true });
  });

  it('accept any order, spaces around commas, upper-case hex and unknown schemes', () => {
    const hex = v1(secret, t, body);
    for (const header of [
      `v1=${hex},t=${t}`,
      ` t=${t} , v1=${hex} `,
      `t=${t},v1=${hex.toUpperCase()}`,
      `t=${t},v2=whatever,v1=${hex}`,
    ])
      expect(verifyPspSignature(header, secret, body, at(t)), header).toEqual({ ok: true });
  });

  it('accept several v1 values when one of them matches (a secret being rotated)', () => {
    const header = `t=${t}, v1=${v1('old-secret', t, body)} ,v1=${v1(secret, t, body)}`;
    expect(verifyPspSignature(header, secret, body, at(t))).toEqual({ ok: true });
    expect(verifyPspSignature(header, 'old-secret', body, at(t))).toEqual({ ok: true });
    expect(verifyPspSignature(header, 'another', body, at(t))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it.each([undefined, '', '   '])('report a missing header (%j)', (header) => {
    expect(verifyPspSignature(header, secret, body, at(t))).toEqual({
      ok: false,
      reason: 'missing',
    });
  });

  const hex = v1(secret, t, body);
  it.each([
    ['no key-value pairs', 'garbage'],
    ['no timestamp', `v1=${hex}`],
    ['no signature', `t=${t}`],
    ['a timestamp that is not an integer', `t=${t}.5,v1=${hex}`],
    ['a negative timestamp', `t=-${t},v1=${hex}`],
    ['a timestamp in words', `t=now,v1=${hex}`],
    ['two timestamps', `t=${t},t=${t},v1=${hex}`],
    ['a short signature', `t=${t},v1=${hex.slice(0, 62)}`],
    ['a long signature', `t=${t},v1=${hex}00`],
    ['a signature that is not hex', `t=${t},v1=${'g'.repeat(64)}`],
    ['a base64 signature', `t=${t},v1=${Buffer.from(hex, 'hex').toString('base64')}`],
    ['an empty entry', `t=${t},,v1=${hex}`],
    ['a trailing comma', `t=${t},v1=${hex},`],
  ])('report a malformed header: %s', (_, header) => {
    expect(verifyPspSignature(header, secret, body, at(t))).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('hold a 5-minute window both ways, to the millisecond', () => {
    const header = signPspBody(secret, body, t);
    const check = (nowMs: number) => verifyPspSignature(header, secret, body, nowMs);
    expect(check(at(t + 300))).toEqual({ ok: true });
    expect(check(at(t - 300))).toEqual({ ok: true });
    expect(check(at(t + 300) + 1)).toEqual({ ok: false, reason: 'expired' });
    expect(check(at(t + 301))).toEqual({ ok: false, reason: 'expired' });
    expect(check(at(t - 301))).toEqual({ ok: false, reason: 'expired' });
    expect(verifyPspSignature(header, secret, body, at(t + 60), 30)).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('report an expired signature before comparing it (a stale forgery learns nothing more)', () => {
    const header = `t=${t},v1=${'0'.repeat(64)}`;
    expect(verifyPspSignature(header, secret, body, at(t + 3600))).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('report a mismatch for a tampered body, a wrong secret or a moved timestamp', () => {
    const header = signPspBody(secret, body, t);
    const tampered = Buffer.from(body.toString().replace('1234.56', '9234.56'));
    expect(verifyPspSignature(header, secret, tampered, at(t))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyPspSignature(header, 'wrong', body, at(t))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    const moved = header.replace(`t=${t}`, `t=${t + 1}`);
    expect(verifyPspSignature(moved, secret, body, at(t))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    // The same second written with a leading zero is another signed text.
    const padded = header.replace(`t=${t}`, `t=0${t}`);
    expect(verifyPspSignature(padded, secret, body, at(t))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('accept every signed body and refuse it with any byte changed', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        fc.string({ minLength: 1 }),
        fc.nat(),
        fc.integer({ min: -300, max: 300 }),
        (bytes, key, index, skew) => {
          const raw = Buffer.from(bytes);
          const header = signPspBody(key, raw, t);
          expect(verifyPspSignature(header, key, raw, at(t + skew))).toEqual({ ok: true });
          const changed = Buffer.from(raw);
          const i = index % changed.length;
          changed[i] = (changed[i]! + 1) % 256;
          expect(verifyPspSignature(header, key, changed, at(t + skew))).toEqual({
            ok: false,
            reason: 'mismatch',
          });
        },
      ),
    );
  });
});
