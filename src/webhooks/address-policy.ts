import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may be sent. Public unicast addresses only; loopback and private ranges (IPv4
 * private, IPv6 unique-local) only with WEBHOOK_ALLOW_PRIVATE_TARGETS, for local development.
 * Link-local (169.254.169.254, the cloud metadata address, included), CGNAT, multicast,
 * broadcast, reserved and unspecified addresses are never allowed. IPv4-mapped IPv6 is judged as
 * the IPv4 address it carries; other IPv6 forms that embed IPv4 (6to4, Teredo, NAT64) are refused.
 */
export function checkAddress(
  address: string,
  options: { allowPrivate: boolean },
): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (options.allowPrivate && ['loopback', 'private', 'uniqueLocal'].includes(range))
    return undefined;
  return `${address} is a ${range} address`;
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
 * changes to a private address between checks is caught at the connection itself.
 */
export function guardedLookup(options: {
  allowPrivate: boolean;
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}) {
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
          return callback(new Error(`${hostname} resolved to no address`), '');
        const refused = addresses.map((a) => checkAddress(a.address, options)).find(Boolean);
        if (refused) return callback(new ForbiddenTargetError(`${hostname}: ${refused}`), '');
        if (lookupOptions.all) return callback(null, addresses);
        const [first] = addresses;
        callback(null, first!.address, first!.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
}

/** At creation, what the URL itself shows: an address literal (in any notation) or `localhost`. */
export function checkUrlTarget(url: URL, options: { allowPrivate: boolean }): string | undefined {
  // WHATWG URL parsing already turned decimal and octal IPv4 forms (2130706433, 0177.0.0.1) into
  // dotted quads, and keeps IPv6 literals in brackets.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return checkAddress(host, options);
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return options.allowPrivate ? undefined : `${host} is a loopback name`;
  }
  return undefined;
}
