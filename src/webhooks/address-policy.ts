import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Where webhooks may be sent, and whether the development exceptions apply. */
export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: loopback and private ranges, and any port (development). */
  allowPrivate: boolean;
}

/** The ranges WEBHOOK_ALLOW_PRIVATE_TARGETS opens, as `ipaddr.js` names them. */
const developmentRanges = new Set(['loopback', 'private', 'uniqueLocal']);

/** IPv6 global unicast (RFC 4291): every other IPv6 block is local, special or unassigned. */
const globalUnicast = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Special-purpose blocks inside 2000::/3 (IANA's IPv6 special-purpose registry), most specific
 * first. `ipaddr.js` names these too (and a few more); they are listed here as well so the policy
 * does not rest on one version of its table.
 */
const specialIPv6Blocks = [
  ['2001::/32', 'Teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:10::/28', 'ORCHID'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  // The rest of 2001::/23 (AMT, AS112, drone tags…): anycast and protocol blocks, not receivers.
  ['2001::/23', 'IETF protocol assignments'],
].map(([cidr, name]) => ({ block: ipaddr.IPv6.parseCIDR(cidr!), name: name! }));

/**
 * Why an address may not receive webhooks, or undefined if it may. The reason names the kind of
 * address (`loopback`, `not global unicast`, `Teredo`…), never the address itself.
 *
 * Public unicast only: IPv4 outside every special range `ipaddr.js` knows (private, loopback,
 * link-local with the cloud metadata address, CGNAT, 192.0.0.0/24, TEST-NETs, benchmarking,
 * 240/4, multicast, broadcast, 0/8…); IPv6 inside 2000::/3 and outside its special blocks.
 * IPv4-mapped IPv6 is judged as the IPv4 address it carries; every other IPv6 form that embeds
 * IPv4 (IPv4-compatible `::a.b.c.d`, NAT64, 6to4, Teredo) is refused. With `allowPrivate`,
 * loopback, IPv4 private and IPv6 unique-local addresses pass; link-local never does.
 */
export function checkAddress(address: string, policy: TargetPolicy): string | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return 'not an IP address';
  if (parsed.kind() === 'ipv4') return checkIPv4(parsed as ipaddr.IPv4, policy);
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return checkIPv4(ipv6.toIPv4Address(), policy);
  const range = ipv6.range();
  if (policy.allowPrivate && developmentRanges.has(range)) return undefined;
  // `ipaddr.js` calls every IPv6 address outside its table `unicast`, IPv4-compatible ones
  // (::7f00:1) included: only 2000::/3 holds global unicast.
  if (!ipv6.match(globalUnicast)) return range === 'unicast' ? 'not global unicast' : range;
  const special = specialIPv6Blocks.find(({ block }) => ipv6.match(block));
  if (special) return special.name;
  return range === 'unicast' ? undefined : range;
}

/**
 * `ipaddr.js` (2.5) reads the IPv4-compatible form `::a.b.c.d` as the IPv4-mapped
 * `::ffff:a.b.c.d`, and glibc prints IPv4-compatible DNS answers in exactly that form: an IPv6
 * address written with a dotted tail is rebuilt here from what its text says.
 */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  if (!text.includes(':') || !text.includes('.')) return ipaddr.parse(text);
  try {
    const cut = text.lastIndexOf(':') + 1;
    const head = ipaddr.IPv6.parse(`${text.slice(0, cut)}0:0`);
    const [a, b, c, d] = ipaddr.IPv4.parse(text.slice(cut)).octets as [
      number,
      number,
      number,
      number,
    ];
    return new ipaddr.IPv6([...head.parts.slice(0, 6), (a << 8) | b, (c << 8) | d]);
  } catch {
    return undefined;
  }
}

function checkIPv4(address: ipaddr.IPv4, policy: TargetPolicy): string | undefined {
  const range = address.range();
  if (range === 'unicast') return undefined;
  if (policy.allowPrivate && developmentRanges.has(range)) return undefined;
  return range;
}

/**
 * Why a URL's port may not receive webhooks, or undefined if it may: only the configured ports
 * (WEBHOOK_ALLOWED_PORTS; an https URL without one means 443), any with `allowPrivate`.
 */
export function checkPort(
  url: URL,
  policy: TargetPolicy & { allowedPorts: readonly number[] },
): string | undefined {
  if (policy.allowPrivate) return undefined;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (policy.allowedPorts.includes(port)) return undefined;
  return `port ${port} is not allowed (allowed: ${policy.allowedPorts.join(', ')})`;
}

export class ForbiddenTargetError extends Error {
  readonly code = 'forbidden_target';
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenTargetError';
  }
}

/**
 * A `lookup` for an HTTP agent: resolves the host, refuses the connection if any answer is not an
 * allowed address, and hands the socket exactly the addresses it checked — so a DNS answer that
 * changes to a private address between checks is caught at the connection itself. The refusal
 * names neither the host's addresses nor their kind: the partner reads it in the attempt's error,
 * and it must not map our network for them.
 */
export function guardedLookup(
  options: TargetPolicy & { resolve?: (hostname: string) => Promise<LookupAddress[]> },
) {
  const resolve =
    options.resolve ??
    ((hostname: string) =>
      new Promise<LookupAddress[]>((done, fail) =>
        dnsLookup(hostname, { all: true }, (error, addresses) =>
          error ? fail(error) : done(addresses),
        ),
      ));
  return (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0)
          return callback(new Error('the host resolved to no address'), '');
        if (addresses.some((a) => checkAddress(a.address, options) !== undefined)) {
          return callback(
            new ForbiddenTargetError('the host resolved to an address that is not public'),
            '',
          );
        }
        if (lookupOptions.all) return callback(null, addresses);
        const [first] = addresses;
        callback(null, first!.address, first!.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
}

/**
 * What the URL itself shows about its host: an address literal (in any notation) or `localhost`.
 * The reason never repeats the address.
 */
export function checkUrlTarget(url: URL, policy: TargetPolicy): string | undefined {
  // WHATWG URL parsing already turned decimal and octal IPv4 forms (2130706433, 0177.0.0.1) into
  // dotted quads, and keeps IPv6 literals in brackets.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    const refused = checkAddress(host, policy);
    return refused && `the URL's host is not a public address (${refused})`;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return policy.allowPrivate ? undefined : "the URL's host is a loopback name";
  }
  return undefined;
}
