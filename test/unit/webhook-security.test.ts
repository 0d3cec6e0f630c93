import type { LookupAddress } from 'node:dns';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { checkAddress, checkUrlTarget, guardedLookup } from '../../src/webhooks/address-policy.js';
import { newEndpointSecret, signatureHeader } from '../../src/webhooks/signature.js';

describe('the webhook address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.8', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['0.0.0.0', 'unspecified'],
    ['192.0.2.10', 'reserved'],
    ['::1', 'loopback'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:10.0.0.1', 'private'],
    ['2002:a00:1::', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(checkAddress(address, { allowPrivate: false })).toContain(range);
  });

  it('allows public unicast addresses', () => {
    for (const address of ['8.8.8.8', '200.160.2.3', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
      expect(checkAddress(address, { allowPrivate: false })).toBeUndefined();
    }
  });

  it('allows loopback and private ranges only with the development flag, never link-local or metadata', () => {
    for (const address of ['127.0.0.1', '10.0.0.8', '192.168.1.1', '::1', 'fd12::1']) {
      expect(checkAddress(address, { allowPrivate: true })).toBeUndefined();
    }
    for (const address of ['169.254.169.254', 'fe80::1', '100.64.0.1', '0.0.0.0']) {
      expect(checkAddress(address, { allowPrivate: true })).toBeDefined();
    }
  });

  it('sees through IPv4 literals in decimal, octal and hex form, and IPv6 literals', () => {
    for (const url of [
      'https://2130706433/hook',
      'https://0177.0.0.1/hook',
      'https://0x7f.1/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://localhost:8443/hook',
      'https://api.localhost/hook',
    ]) {
      expect({
        url,
        refused: checkUrlTarget(new URL(url), { allowPrivate: false }) !== undefined,
      }).toEqual({
        url,
        refused: true,
      });
    }
    expect(
      checkUrlTarget(new URL('https://hooks.partner.example/x'), { allowPrivate: false }),
    ).toBeUndefined();
  });

  it('refuses a connection when the name resolves to a forbidden address, even if it resolved publicly before', async () => {
    const answers: LookupAddress[][] = [
      [{ address: '93.184.216.34', family: 4 }],
      [{ address: '127.0.0.1', family: 4 }],
    ];
    const lookup = guardedLookup({
      allowPrivate: false,
      resolve: async () => answers.shift() ?? [],
    });
    const ask = () =>
      new Promise<{ error: Error | null; address: unknown }>((resolve) =>
        lookup('rebinding.example', {}, (error, address) => resolve({ error, address })),
      );
    expect(await ask()).toEqual({ error: null, address: '93.184.216.34' });
    const second = await ask();
    expect(second.error?.message).toContain('loopback');
  });

  it('refuses when any of several answers is forbidden', async () => {
    const lookup = guardedLookup({
      allowPrivate: false,
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
    });
    const error = await new Promise<Error | null>((resolve) =>
      lookup('mixed.example', { all: true }, (e) => resolve(e)),
    );
    expect(error?.message).toContain('private');
  });
});

describe('Standard Webhooks signatures', () => {
  it("match the library's own test vector", () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const timestamp = 1614265330;
    const body = '{"test": 2432232314}';
    expect(signatureHeader({ id, timestamp, body, secrets: [secret] })).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
    expect(signatureHeader({ id, timestamp, body, secrets: [secret] })).toBe(
      new Webhook(secret).sign(id, new Date(timestamp * 1000), body),
    );
  });

  it('verify with the official library for every secret listed, as during a rotation', () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'customer.created', data: { id: 'cust_1' } });
    const headers = {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader({
        id: 'evt_1',
        timestamp,
        body,
        secrets: [current, previous],
      }),
    };
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newEndpointSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });
});
