import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { presentedMacMatches } from '../../src/domain/presented-mac.js';

describe('a presented MAC', () => {
  // 32 bytes are 43 base64url characters; the last one's two low bits are unused.
  const mac = createHmac('sha256', 'key').update('cust_1').digest();
  const canonical = mac.toString('base64url');
  const base = canonical.slice(0, -1);
  const lastValue = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(
    canonical.at(-1)!,
  );
  const sameBytes = [0, 1, 2, 3].map(
    (low) =>
      base +
      'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[(lastValue & ~3) | low],
  );

  it('matches in its canonical spelling only, not in one that decodes to the same bytes', () => {
    expect(presentedMacMatches(mac, canonical)).toBe(true);
    const others = sameBytes.filter((spelling) => spelling !== canonical);
    expect(others).toHaveLength(3);
    for (const spelling of others) {
      // The control: Node decodes it to the very bytes of the MAC.
      expect(Buffer.from(spelling, 'base64url').equals(mac)).toBe(true);
      expect(presentedMacMatches(mac, spelling)).toBe(false);
    }
  });

  it('refuses another MAC, a shorter or a longer text', () => {
    const other = createHmac('sha256', 'key').update('cust_2').digest();
    expect(presentedMacMatches(mac, other.toString('base64url'))).toBe(false);
    expect(presentedMacMatches(mac, canonical.slice(0, -1))).toBe(false);
    expect(presentedMacMatches(mac, `${canonical}A`)).toBe(false);
    expect(presentedMacMatches(mac, '')).toBe(false);
  });
});
