import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { TLSConfig } from '@temporalio/client';

/** How every connection to Temporal (the API's, the worker's) is secured; `false`: plaintext. */
export type TemporalTls = TLSConfig | false;

export interface TemporalConnectionSecurity {
  tls: TemporalTls;
  /** Sent as `Authorization: Bearer …` (Temporal Cloud's API keys, or a server's authorizer). */
  apiKey: string | undefined;
}

const PEM = /^\s*-----BEGIN [A-Z0-9 ]+-----/;

/**
 * TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY and TEMPORAL_TLS_CA each take a PEM file's path or the PEM
 * itself (a value starting `-----BEGIN`): files suit mounted secrets, PEM suits platforms that only
 * pass variables. Read once, at start, and checked there: a missing file, a certificate or key that
 * does not parse, a key that is not the certificate's, one of the pair without the other.
 */
function pemOf(
  name: string,
  value: string | undefined,
  problems: string[],
): { pem: Buffer; name: string } | undefined {
  if (!value) return undefined;
  let text = value;
  if (!PEM.test(value)) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      problems.push(
        `${name}: cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? String(error)}); expected a PEM file's path or the PEM itself`,
      );
      return undefined;
    }
  }
  if (!PEM.test(text)) {
    problems.push(`${name}: not PEM (expected -----BEGIN …)`);
    return undefined;
  }
  return { pem: Buffer.from(text), name };
}

function certificate(
  entry: { pem: Buffer; name: string } | undefined,
  problems: string[],
): X509Certificate | undefined {
  if (!entry) return undefined;
  try {
    return new X509Certificate(entry.pem);
  } catch {
    problems.push(`${entry.name}: not a PEM certificate`);
    return undefined;
  }
}

/** `host:port` on this machine's loopback (localhost, 127.x.y.z, [::1]). */
function isLoopbackAddress(address: string): boolean {
  const host = address.startsWith('[')
    ? address.slice(0, address.indexOf(']') + 1)
    : address.split(':')[0]!;
  return host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]';
}

const flag = (value: string | undefined) =>
  value === undefined || value === '' ? undefined : value === 'true' || value === '1';

/**
 * The Temporal connection's security from the environment. TLS is on when TEMPORAL_TLS says so,
 * or when a certificate, a CA, a server name or an API key is configured (an API key never travels
 * in clear, unless in development TEMPORAL_TLS=false says so for a local server); mutual TLS when
 * TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY are both set.
 */
export function parseTemporalSecurity(
  env: NodeJS.ProcessEnv,
  strict: boolean,
): TemporalConnectionSecurity & { problems: string[] } {
  const problems: string[] = [];
  const tlsFlag = env.TEMPORAL_TLS;
  if (tlsFlag !== undefined && !['true', 'false', '1', '0', ''].includes(tlsFlag))
    problems.push('TEMPORAL_TLS: expected true or false');
  const wanted = flag(tlsFlag);
  const cert = pemOf('TEMPORAL_TLS_CERT', env.TEMPORAL_TLS_CERT, problems);
  const key = pemOf('TEMPORAL_TLS_KEY', env.TEMPORAL_TLS_KEY, problems);
  const ca = pemOf('TEMPORAL_TLS_CA', env.TEMPORAL_TLS_CA, problems);
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  const apiKey = env.TEMPORAL_API_KEY || undefined;

  if (env.TEMPORAL_TLS_CERT && !env.TEMPORAL_TLS_KEY)
    problems.push('TEMPORAL_TLS_CERT: set without TEMPORAL_TLS_KEY (mutual TLS needs both)');
  if (env.TEMPORAL_TLS_KEY && !env.TEMPORAL_TLS_CERT)
    problems.push('TEMPORAL_TLS_KEY: set without TEMPORAL_TLS_CERT (mutual TLS needs both)');
  const clientCert = certificate(cert, problems);
  certificate(ca, problems);
  if (key) {
    try {
      const privateKey = createPrivateKey(key.pem);
      if (clientCert && !clientCert.checkPrivateKey(privateKey))
        problems.push('TEMPORAL_TLS_KEY: is not the key of TEMPORAL_TLS_CERT');
    } catch {
      problems.push('TEMPORAL_TLS_KEY: not a PEM private key');
    }
  }

  const tlsSettings = [
    env.TEMPORAL_TLS_CERT && 'TEMPORAL_TLS_CERT',
    env.TEMPORAL_TLS_KEY && 'TEMPORAL_TLS_KEY',
    env.TEMPORAL_TLS_CA && 'TEMPORAL_TLS_CA',
    serverName && 'TEMPORAL_TLS_SERVER_NAME',
  ].filter((name): name is string => !!name);
  if (wanted === false && tlsSettings.length > 0)
    problems.push(`TEMPORAL_TLS: false, but ${tlsSettings.join(', ')} configure TLS; drop one`);
  if (wanted === false && apiKey && strict)
    problems.push(
      'TEMPORAL_API_KEY: would travel in clear with TEMPORAL_TLS=false; outside development an API key needs TLS',
    );

  const on = wanted ?? (tlsSettings.length > 0 || apiKey !== undefined);
  // Outside development Temporal is reached over TLS and knows its caller (issue 37): whoever
  // reaches its frontend can stop any workflow. A server on this machine's loopback aside.
  const address = env.TEMPORAL_ADDRESS || 'localhost:7233';
  if (strict && !isLoopbackAddress(address)) {
    if (!on)
      problems.push(
        `TEMPORAL_TLS: the connection to Temporal at ${address} would be plaintext; outside development it is TLS (TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME for a private CA, TEMPORAL_TLS=true for the system's roots)`,
      );
    if (!(env.TEMPORAL_TLS_CERT && env.TEMPORAL_TLS_KEY) && !apiKey)
      problems.push(
        `TEMPORAL_TLS_CERT: Temporal at ${address} must authenticate this service outside development: mutual TLS (TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY, the frontend requiring client certificates) or an API key (TEMPORAL_API_KEY)`,
      );
  }
  const tls: TemporalTls = on
    ? {
        ...(serverName ? { serverNameOverride: serverName } : {}),
        ...(ca ? { serverRootCACertificate: ca.pem } : {}),
        ...(cert && key ? { clientCertPair: { crt: cert.pem, key: key.pem } } : {}),
      }
    : false;
  return { tls, apiKey, problems };
}
