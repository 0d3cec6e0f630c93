import type { LookupAddress } from 'node:dns';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkAddress,
  checkPort,
  checkUrlTarget,
  ForbiddenTargetError,
  guardedLookup,
} from '../../src/webhooks/address-policy.js';
import { postWebhook } from '../../src/webhooks/sender.js';
import { allowLoopbackConnectionsOnly } from '../fuzz/loopback-only.js';
import { newEndpointSecret, signatureHeader } from '../../src/webhooks/signature.js';

const production = { allowPrivate: false };
const development = { allowPrivate: true };
const ports = { allowedPorts: [443, 8443] };
/** Anything that reads as an address: a dotted quad or two colons' worth of IPv6. */
const addressText = /\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]*:[0-9a-f]*:/i;

describe('the webhook address policy', () => {
  it.each([
    // IPv4 outside public unicast
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.8', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['250.1.2.3', 'reserved'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    // IPv4-mapped IPv6, judged as the IPv4 address it carries
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:100.64.0.1', 'carrierGradeNat'],
    ['::ffff:198.18.0.1', 'reserved'],
    // IPv6 outside 2000::/3
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::7f00:1', 'not global unicast'],
    ['::127.0.0.1', 'not global unicast'],
    ['::a00:1', 'not global unicast'],
    ['::808:808', 'not global unicast'],
    // the same IPv4-compatible addresses as glibc prints them (ipaddr.js alone reads them as mapped)
    ['::10.0.0.1', 'not global unicast'],
    ['::8.8.8.8', 'not global unicast'],
    ['::ffff:0:a00:1', 'rfc6145'],
    ['::ffff:0:8.8.8.8', 'rfc6145'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['64:ff9b::10.0.0.1', 'rfc6052'],
    ['64:ff9b::808:808', 'rfc6052'],
    ['64:ff9b:1::a00:1', 'rfc6052'],
    ['100::1', 'discard'],
    ['4000::1', 'not global unicast'],
    ['5f00::1', 'segmentRouting'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    // Special blocks inside 2000::/3
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:3::1', 'IETF protocol assignments'],
    ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['2001:db8::1', 'documentation'],
    ['2001:db8:ffff::1', 'documentation'],
    ['2002:a00:1::1', '6to4'],
    ['2002:808:808::1', '6to4'],
    ['3fff::1', 'documentation'],
    ['2620:4f:8000::1', 'as112v6'],
  ])('refuses %s (%s)', (address, reason) => {
    const refused = checkAddress(address, production);
    expect(refused).toBe(reason);
    expect(refused).not.toMatch(addressText);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '200.160.2.3',
    '::ffff:8.8.8.8',
    '::ffff:c8a0:203',
    '::FFFF:200.160.2.3',
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '2800:3f0:4001:80f::200e',
    '2a00:1450:4001::1',
  ])('allows the public unicast address %s', (address) => {
    expect(checkAddress(address, production)).toBeUndefined();
  });

  it('allows loopback and private ranges only with the development flag', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.8',
      '172.16.5.4',
      '192.168.1.1',
      '::1',
      'fc00::1',
      'fd12::1',
      '::ffff:127.0.0.1',
      '::ffff:192.168.1.1',
    ]) {
      expect({ address, refused: checkAddress(address, development) }).toEqual({
        address,
        refused: undefined,
      });
    }
  });

  it('keeps refusing link-local, metadata and non-global IPv6 forms with the development flag', () => {
    for (const address of [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      'fe80::1',
      '100.64.0.1',
      '0.0.0.0',
      '::',
      '224.0.0.1',
      '::7f00:1',
      '::127.0.0.1',
      '::a00:1',
      '::192.168.1.1',
      'fec0::1',
      '64:ff9b::7f00:1',
      '64:ff9b:1::a00:1',
      '2001:db8::1',
      '2002:7f00:1::1',
    ]) {
      expect({ address, refused: checkAddress(address, development) !== undefined }).toEqual({
        address,
        refused: true,
      });
    }
  });

  it('sees through IPv4 literals in decimal, octal and hex form, and IPv6 literals', () => {
    for (const url of [
      'https://2130706433/hook',
      'https://0177.0.0.1/hook',
      'https://0x7f.1/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::7f00:1]/hook',
      'https://[::127.0.0.1]/hook',
      'https://[fec0::1]/hook',
      'https://[64:ff9b:1::a00:1]/hook',
      'https://[2001:db8::1]/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://localhost:8443/hook',
      'https://api.localhost/hook',
    ]) {
      expect({ url, refused: checkUrlTarget(new URL(url), production) !== undefined }).toEqual({
        url,
        refused: true,
      });
    }
    expect(checkUrlTarget(new URL('https://hooks.partner.example/x'), production)).toBeUndefined();
  });

  it('says what kind of host it refuses without repeating its address', () => {
    for (const url of [
      'https://10.0.0.5/hook',
      'https://2130706433/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[::7f00:1]/hook',
      'https://[fec0::1]/hook',
      'https://[64:ff9b:1::a00:1]/hook',
      'https://[fd00::1]/hook',
    ]) {
      const target = new URL(url);
      const refused = checkUrlTarget(target, production);
      expect(refused).toMatch(/^the URL's host is not a public address \(.+\)$/);
      expect(refused).not.toContain(target.hostname);
      expect(refused).not.toContain(target.hostname.replace(/^\[|\]$/g, ''));
      expect(refused).not.toMatch(addressText);
    }
    expect(checkUrlTarget(new URL('https://localhost/hook'), production)).toBe(
      "the URL's host is a loopback name",
    );
  });
});

describe('the webhook port policy', () => {
  it.each([
    ['https://hooks.partner.example/x', undefined],
    ['https://hooks.partner.example:443/x', undefined],
    ['https://hooks.partner.example:0443/x', undefined],
    ['https://hooks.partner.example:8443/x', undefined],
    ['https://hooks.partner.example:22/x', 'port 22 is not allowed (allowed: 443, 8443)'],
    ['https://hooks.partner.example:80/x', 'port 80 is not allowed (allowed: 443, 8443)'],
    ['https://hooks.partner.example:8080/x', 'port 8080 is not allowed (allowed: 443, 8443)'],
    ['https://hooks.partner.example:65535/x', 'port 65535 is not allowed (allowed: 443, 8443)'],
    ['https://[2001:4860:4860::8888]:6379/x', 'port 6379 is not allowed (allowed: 443, 8443)'],
  ])('%s → %s', (url, expected) => {
    expect(checkPort(new URL(url), { ...production, ...ports })).toBe(expected);
  });

  it('counts a URL without a port as 443, and follows the configured list', () => {
    const only9443 = { ...production, allowedPorts: [9443] };
    expect(checkPort(new URL('https://hooks.partner.example/x'), only9443)).toBe(
      'port 443 is not allowed (allowed: 9443)',
    );
    expect(checkPort(new URL('https://hooks.partner.example:9443/x'), only9443)).toBeUndefined();
  });

  it('is lifted with the development flag', () => {
    expect(checkPort(new URL('https://localhost:22/x'), { ...development, ...ports })).toBe(
      undefined,
    );
  });
});

describe('the guarded lookup', () => {
  const lookupWith = (answers: () => LookupAddress[], policy = production) => {
    const lookup = guardedLookup({ ...policy, resolve: async () => answers() });
    return (hostname: string, options: { all?: boolean } = {}) =>
      new Promise<{ error: Error | null; address: unknown }>((resolve) =>
        lookup(hostname, options, (error, address) => resolve({ error, address })),
      );
  };

  it('refuses a connection when the name resolves to a forbidden address, even if it resolved publicly before', async () => {
    const answers: LookupAddress[][] = [
      [{ address: '93.184.216.34', family: 4 }],
      [{ address: '127.0.0.1', family: 4 }],
    ];
    const ask = lookupWith(() => answers.shift() ?? []);
    expect(await ask('rebinding.example')).toEqual({ error: null, address: '93.184.216.34' });
    const second = await ask('rebinding.example');
    expect(second.error).toBeInstanceOf(ForbiddenTargetError);
    expect(second.error).toMatchObject({ code: 'forbidden_target' });
  });

  it('refuses when any of several answers is forbidden', async () => {
    const ask = lookupWith(() => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ]);
    expect((await ask('mixed.example', { all: true })).error).toBeInstanceOf(ForbiddenTargetError);
  });

  it.each([
    ['10.0.0.5', 4],
    ['169.254.169.254', 4],
    ['100.64.0.1', 4],
    ['::ffff:10.0.0.5', 6],
    ['::a00:5', 6],
    ['::10.0.0.5', 6],
    ['::8.8.8.8', 6],
    ['fec0::5', 6],
    ['64:ff9b:1::a00:5', 6],
    ['2001:db8::5', 6],
    ['fd00::5', 6],
  ])('refuses an answer of %s without naming it', async (address, family) => {
    const { error } = await lookupWith(() => [{ address, family }])('x.example');
    expect(error?.message).toBe('the host resolved to an address that is not public');
    expect(error?.message).not.toContain(address);
    expect(error?.message).not.toMatch(addressText);
  });

  it('hands public answers through, and loopback ones with the development flag', async () => {
    const publicAnswers: LookupAddress[] = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ];
    expect(await lookupWith(() => publicAnswers)('x.example', { all: true })).toEqual({
      error: null,
      address: publicAnswers,
    });
    const loopback = [{ address: '127.0.0.1', family: 4 }];
    expect(await lookupWith(() => loopback, development)('localhost')).toEqual({
      error: null,
      address: '127.0.0.1',
    });
  });
});

describe('the sender', () => {
  // A delivery that got past the checks would reach for the network: the guard turns it into a
  // refused connection before any lookup, so no packet leaves even if a check here regressed.
  let restore: () => void;
  beforeAll(() => {
    restore = allowLoopbackConnectionsOnly();
  });
  afterAll(() => restore());

  it.each([
    [
      'https://hooks.partner.example:22/x',
      'forbidden target: port 22 is not allowed (allowed: 443, 8443)',
    ],
    [
      'https://[::7f00:1]/x',
      "forbidden target: the URL's host is not a public address (not global unicast)",
    ],
    [
      'https://[fec0::1]/x',
      "forbidden target: the URL's host is not a public address (deprecatedSiteLocal)",
    ],
    ['https://10.0.0.5/x', "forbidden target: the URL's host is not a public address (private)"],
  ])('refuses a stored endpoint at %s before opening a socket', async (url, error) => {
    const sent = await postWebhook({
      url,
      headers: {},
      body: '{}',
      allowPrivate: false,
      allowedPorts: [443, 8443],
    });
    expect(sent).toMatchObject({ status: null, error });
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
