import { describe, expect, it } from 'vitest';
import { keyRing } from '../../src/domain/key-ring.js';
import { centavosOf } from '../../src/http/routes/console/kyc.js';
import { reais } from '../../src/http/routes/console/layout.js';
import { consoleSessions, SESSION_SECONDS } from '../../src/http/routes/console/session.js';

const key = (id: string) => ({ id, secret: Buffer.from(`${id}-`.repeat(16)) });
const operator = 'op_0a1b2c3d4e5f60718293a4b5c6d7e8f9';
const token = 'opt_0a1b2c3d4e5f60718293a4b5c6d7e8f9';

describe('the console session and its CSRF tokens', () => {
  it('verifies what it issued, until it expires', () => {
    let now = new Date('2026-11-28T12:00:00Z');
    const sessions = consoleSessions(keyRing([key('k1')]), () => now);
    const { value } = sessions.issue(operator, token);
    expect(sessions.verify(value)).toMatchObject({ operatorId: operator, tokenId: token });
    now = new Date(now.getTime() + SESSION_SECONDS * 1000);
    expect(sessions.verify(value)).toBeUndefined();
  });

  it('refuses a session changed anywhere, or made under a key the ring no longer holds', () => {
    const now = () => new Date('2026-11-28T12:00:00Z');
    const sessions = consoleSessions(keyRing([key('k1')]), now);
    const { value } = sessions.issue(operator, token);
    const parts = value.split('.');
    const other = 'op_ffffffffffffffffffffffffffffffff';
    expect(
      sessions.verify([...parts.slice(0, 3), other, ...parts.slice(4)].join('.')),
    ).toBeUndefined();
    expect(
      sessions.verify([...parts.slice(0, 2), '9999999999', ...parts.slice(3)].join('.')),
    ).toBeUndefined();
    expect(sessions.verify(`${value}x`)).toBeUndefined();
    expect(sessions.verify(undefined)).toBeUndefined();
    // Rotation: a new key first keeps old sessions; dropping the old key ends them.
    const rotated = consoleSessions(keyRing([key('k2'), key('k1')]), now);
    expect(rotated.verify(value)).toBeDefined();
    expect(consoleSessions(keyRing([key('k2')]), now).verify(value)).toBeUndefined();
  });

  it('takes a CSRF token only with the form cookie it was made for', () => {
    const sessions = consoleSessions(keyRing([key('k1')]), () => new Date());
    const cookie = sessions.newFormCookie();
    expect(sessions.formCookieOf(cookie)).toBe(cookie);
    expect(sessions.formCookieOf('short')).toBeUndefined();
    const csrf = sessions.csrfOf(cookie);
    expect(sessions.csrfValid(cookie, csrf)).toBe(true);
    expect(sessions.csrfValid(sessions.newFormCookie(), csrf)).toBe(false);
    expect(sessions.csrfValid(undefined, csrf)).toBe(false);
    expect(sessions.csrfValid(cookie, '')).toBe(false);
    expect(sessions.csrfValid(cookie, `${csrf.slice(0, -2)}AA`)).toBe(false);
    // A token of another purpose's key (the session's) is not a form's.
    expect(
      sessions.csrfValid(cookie, `k1.${sessions.issue(operator, token).value.split('.')[5]}`),
    ).toBe(false);
  });
});

describe('amounts on the console', () => {
  it('shows centavos as reais, in integer arithmetic', () => {
    expect(reais(0)).toBe('R$ 0,00');
    expect(reais(5)).toBe('R$ 0,05');
    expect(reais(123_456_789)).toBe('R$ 1.234.567,89');
    expect(reais(-1_000)).toBe('−R$ 10,00');
  });

  it('reads reais typed by staff as centavos, or nothing', () => {
    expect(centavosOf('30.000,00')).toBe(3_000_000);
    expect(centavosOf('30000')).toBe(3_000_000);
    expect(centavosOf('R$ 1.234,56')).toBe(123_456);
    expect(centavosOf('0,10')).toBe(10);
    for (const wrong of ['', '30,0', '30.00', '1.23,45', '-5', '1e3', '12,345'])
      expect(centavosOf(wrong), wrong).toBeUndefined();
  });
});
