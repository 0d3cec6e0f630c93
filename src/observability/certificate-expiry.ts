import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Gauge, type Registry } from 'prom-client';
import type { Config } from '../config.js';

/** A certificate a process presents or trusts, by the name its expiry is reported under. */
export interface CertificateInUse {
  name: 'temporal_client' | 'temporal_ca' | 'psp_client' | 'psp_ca';
  pem: string | Uint8Array;
}

/**
 * What this configuration presents or trusts: Temporal's client certificate and CA (as the
 * connection reads them, at start) and the PSP's (its PEM files). A process reads them once, so
 * the expiry reported is that of the certificate in use until it restarts.
 */
export function certificatesInUse(config: Pick<Config, 'temporal' | 'psp'>): CertificateInUse[] {
  const found: CertificateInUse[] = [];
  const tls = config.temporal.tls;
  if (tls && tls.clientCertPair)
    found.push({ name: 'temporal_client', pem: tls.clientCertPair.crt });
  if (tls && tls.serverRootCACertificate)
    found.push({ name: 'temporal_ca', pem: tls.serverRootCACertificate });
  if (config.psp) {
    const client = readable(config.psp.tls.certFile);
    if (client) found.push({ name: 'psp_client', pem: client });
    const ca = readable(config.psp.tls.caFile);
    if (ca) found.push({ name: 'psp_ca', pem: ca });
  }
  return found;
}

// A file that cannot be read is the PSP client's to report when it connects; a metric never stops
// a process from starting.
function readable(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * `tls_certificate_expiry_timestamp_seconds{certificate}`: each certificate's notAfter, as Unix
 * seconds (the alert rules compare it with `time()`). A file holding a chain reports its first
 * certificate, the one presented.
 */
export function registerCertificateExpiry(
  registry: Registry,
  certificates: readonly CertificateInUse[],
): void {
  if (registry.getSingleMetric('tls_certificate_expiry_timestamp_seconds')) return;
  const gauge = new Gauge({
    name: 'tls_certificate_expiry_timestamp_seconds',
    help: 'When each certificate this process presents or trusts expires (notAfter, Unix seconds).',
    labelNames: ['certificate'] as const,
    registers: [registry],
  });
  for (const { name, pem } of certificates) {
    let notAfter: number;
    try {
      notAfter = Date.parse(new X509Certificate(pem).validTo);
    } catch {
      continue; // not a certificate: the connection that uses it refuses it, and says so
    }
    gauge.set({ certificate: name }, Math.floor(notAfter / 1000));
  }
}
