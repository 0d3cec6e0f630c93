import ipaddr from 'ipaddr.js';

/**
 * `PSP_WEBHOOK_AUTH=mtls` (contract §14, issue 37 finding 5): the PSP is authenticated by mutual TLS
 * at a proxy in front, which verifies the PSP's client certificate and passes what it found in two
 * headers. Those headers prove something only when the proxy wrote them: the request must come
 * (on its socket, not by `X-Forwarded-For`) from one of the proxy's addresses, the verification
 * header must say `SUCCESS`, and the certificate's subject must be the PSP's. The proxy must set
 * both headers itself, replacing whatever a client sent.
 */
export interface PspMtls {
  /** Addresses or CIDR ranges of the proxy that terminates the PSP's TLS. */
  trustedProxies: readonly string[];
  /** The PSP certificate's subject (DN), exactly as the proxy writes it. */
  subject: string;
  /** The proxy's header with the verification's result (nginx's `$ssl_client_verify`). */
  verifyHeader: string;
  /** The proxy's header with the certificate's subject (nginx's `$ssl_client_s_dn`). */
  subjectHeader: string;
}

/** How the PSP is authenticated: the body's signature under its secret, or mutual TLS in front. */
export type PspAuthentication = { secret: string } | { mtls: PspMtls };

export type ProxyRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Each entry as a range (a bare address is its own range); the entries that do not parse. */
export function parseProxyRanges(list: string): { ranges: ProxyRange[]; invalid: string[] } {
  const ranges: ProxyRange[] = [];
  const invalid: string[] = [];
  for (const entry of list
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    try {
      if (entry.includes('/')) ranges.push(ipaddr.parseCIDR(entry));
      else {
        const address = ipaddr.process(entry);
        ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
      }
    } catch {
      invalid.push(entry);
    }
  }
  return { ranges, invalid };
}

export type MtlsRefusal = 'untrusted_peer' | 'unverified' | 'wrong_subject';

const inRange = (peer: ipaddr.IPv4 | ipaddr.IPv6, [range, bits]: ProxyRange): boolean =>
  peer instanceof ipaddr.IPv4
    ? range instanceof ipaddr.IPv4 && peer.match(range, bits)
    : range instanceof ipaddr.IPv6 && peer.match(range, bits);

/**
 * The check of a request under these settings: why it does not carry the PSP's verified
 * certificate, or undefined when it does. `peer` is the socket's remote address.
 */
export function pspMtlsCheck(
  settings: PspMtls,
): (request: {
  peer: string | undefined;
  header: (name: string) => string;
}) => MtlsRefusal | undefined {
  const { ranges } = parseProxyRanges(settings.trustedProxies.join(','));
  return ({ peer, header }) => {
    const address = peer && ipaddr.isValid(peer) ? ipaddr.process(peer) : undefined;
    if (!address || !ranges.some((range) => inRange(address, range))) return 'untrusted_peer';
    if (header(settings.verifyHeader) !== 'SUCCESS') return 'unverified';
    // An empty expected subject (a development configuration without one) matches nothing.
    if (!settings.subject || header(settings.subjectHeader) !== settings.subject)
      return 'wrong_subject';
    return undefined;
  };
}
