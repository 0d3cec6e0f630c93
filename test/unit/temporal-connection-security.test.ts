// It opens native connections: the quiet runtime the service tests' forks get (vitest.config.ts).
import '../helpers/quiet-runtime.js';
import { rmSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { NativeConnection } from '@temporalio/worker';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, developmentRing, loadConfig } from '../../src/config.js';
import { lazyTemporalClient, temporalReachable } from '../../src/temporal/client.js';
import { connectionSecurity } from '../../src/temporal/client.js';
import {
  certificatesInUse,
  registerCertificateExpiry,
} from '../../src/observability/certificate-expiry.js';
import { makeTestPki, type TestPki } from '../helpers/test-pki.js';

const development = {
  NODE_ENV: 'development',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  S3_BUCKET: 'documents',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => {
  if (pki) rmSync(pki.dir, { recursive: true, force: true });
});

describe('Temporal connection security from configuration', () => {
  it('is plaintext unless told otherwise', () => {
    expect(loadConfig(development).temporal).toMatchObject({ tls: false, apiKey: undefined });
  });

  it('takes mutual TLS from files or from PEM in the variable, checking the pair matches', () => {
    const fromFiles = loadConfig({
      ...development,
      TEMPORAL_TLS_CERT: pki.client.certFile,
      TEMPORAL_TLS_KEY: pki.client.keyFile,
      TEMPORAL_TLS_CA: pki.ca.certFile,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    }).temporal.tls;
    expect(fromFiles).toEqual({
      serverNameOverride: 'temporal.internal',
      serverRootCACertificate: Buffer.from(pki.ca.cert),
      clientCertPair: { crt: Buffer.from(pki.client.cert), key: Buffer.from(pki.client.key) },
    });
    const inline = loadConfig({
      ...development,
      TEMPORAL_TLS_CERT: pki.client.cert,
      TEMPORAL_TLS_KEY: pki.client.key,
    }).temporal.tls;
    expect(inline).toEqual({
      clientCertPair: { crt: Buffer.from(pki.client.cert), key: Buffer.from(pki.client.key) },
    });
    // TLS with the system's roots alone, and an API key (TLS unless said otherwise).
    expect(loadConfig({ ...development, TEMPORAL_TLS: 'true' }).temporal.tls).toEqual({});
    expect(loadConfig({ ...development, TEMPORAL_API_KEY: 'key-1' }).temporal).toMatchObject({
      tls: {},
      apiKey: 'key-1',
    });
  });

  it('refuses half a pair, a mismatched key, unreadable or non-PEM files, and contradictions', () => {
    expect(problemsOf({ ...development, TEMPORAL_TLS_CERT: pki.client.certFile })).toEqual([
      'TEMPORAL_TLS_CERT: set without TEMPORAL_TLS_KEY (mutual TLS needs both)',
    ]);
    expect(problemsOf({ ...development, TEMPORAL_TLS_KEY: pki.client.keyFile })).toEqual([
      'TEMPORAL_TLS_KEY: set without TEMPORAL_TLS_CERT (mutual TLS needs both)',
    ]);
    expect(
      problemsOf({
        ...development,
        TEMPORAL_TLS_CERT: pki.client.certFile,
        TEMPORAL_TLS_KEY: pki.server.keyFile,
      }),
    ).toEqual(['TEMPORAL_TLS_KEY: is not the key of TEMPORAL_TLS_CERT']);
    expect(problemsOf({ ...development, TEMPORAL_TLS_CA: '/nonexistent/ca.pem' })).toEqual([
      "TEMPORAL_TLS_CA: cannot read /nonexistent/ca.pem (ENOENT); expected a PEM file's path or the PEM itself",
    ]);
    expect(problemsOf({ ...development, TEMPORAL_TLS_CA: pki.client.keyFile })).toEqual([
      'TEMPORAL_TLS_CA: not a PEM certificate',
    ]);
    expect(
      problemsOf({ ...development, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: pki.ca.certFile }),
    ).toEqual(['TEMPORAL_TLS: false, but TEMPORAL_TLS_CA configure TLS; drop one']);
    expect(problemsOf({ ...development, TEMPORAL_TLS: 'maybe' })).toEqual([
      'TEMPORAL_TLS: expected true or false',
    ]);
    // An API key in clear: a local server in development may take it, nothing else.
    expect(
      loadConfig({ ...development, TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' }).temporal.tls,
    ).toBe(false);
    expect(
      problemsOf({
        ...development,
        NODE_ENV: 'production',
        TEMPORAL_TLS: 'false',
        TEMPORAL_API_KEY: 'k',
      }),
    ).toContain(
      'TEMPORAL_API_KEY: would travel in clear with TEMPORAL_TLS=false; outside development an API key needs TLS',
    );
  });
});

/**
 * A loopback gRPC-over-TLS server that wants a client certificate of the test CA: it records who
 * called (the certificate's CN) with which Authorization header, and answers UNIMPLEMENTED.
 */
function startTlsServer(): Promise<{
  server: Http2SecureServer;
  address: string;
  calls: { path: string; authorization: string | undefined; clientCn: string | undefined }[];
}> {
  const calls: { path: string; authorization: string | undefined; clientCn: string | undefined }[] =
    [];
  const server = createSecureServer({
    key: pki.server.key,
    cert: pki.server.cert,
    ca: pki.ca.cert,
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on('stream', (stream, headers) => {
    const socket = stream.session?.socket as TLSSocket | undefined;
    const subject = socket?.getPeerCertificate().subject as { CN?: string } | undefined;
    calls.push({
      path: String(headers[':path']),
      authorization: headers.authorization,
      clientCn: subject?.CN,
    });
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
      { endStream: true },
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
        calls,
      }),
    ),
  );
}

describe('Temporal connections over mutual TLS with an API key (a loopback server)', () => {
  const securityOf = (client: 'client' | 'stranger') =>
    loadConfig({
      ...development,
      TEMPORAL_TLS_CERT: pki[client].certFile,
      TEMPORAL_TLS_KEY: pki[client].keyFile,
      TEMPORAL_TLS_CA: pki.ca.certFile,
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
      TEMPORAL_API_KEY: 'temporal-api-key-1',
    }).temporal;

  it("the API's client presents its certificate and the key", async () => {
    const tls = await startTlsServer();
    const client = lazyTemporalClient({
      ...securityOf('client'),
      address: tls.address,
      namespace: 'default',
      payloadKeys: developmentRing('TEMPORAL_PAYLOAD_KEYS'),
    });
    try {
      expect(await temporalReachable(client)).toBe(false);
      expect(tls.calls[0]).toEqual({
        path: '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo',
        authorization: 'Bearer temporal-api-key-1',
        clientCn: 'embedded-credit-worker',
      });
    } finally {
      await client.connection.close();
      tls.server.close();
    }
  });

  it("the worker's native connection presents them too; a certificate of another CA gets nowhere", async () => {
    const tls = await startTlsServer();
    try {
      const connect = (who: 'client' | 'stranger') =>
        NativeConnection.connect({
          address: tls.address,
          ...connectionSecurity(securityOf(who)),
        }).then(
          (connection) => connection.close(),
          () => undefined,
        );
      await connect('client');
      expect(tls.calls[0]).toMatchObject({
        authorization: 'Bearer temporal-api-key-1',
        clientCn: 'embedded-credit-worker',
      });
      const before = tls.calls.length;
      await connect('stranger');
      expect(tls.calls).toHaveLength(before);
    } finally {
      tls.server.close();
    }
  });
});

describe('the certificates in use, for the expiry alerts', () => {
  it('reports when each configured certificate expires, and none when none is configured', async () => {
    const config = loadConfig({
      ...development,
      TEMPORAL_TLS_CERT: pki.client.certFile,
      TEMPORAL_TLS_KEY: pki.client.keyFile,
      TEMPORAL_TLS_CA: pki.ca.certFile,
      PSP_API_URL: 'https://127.0.0.1:9/',
      PSP_CLIENT_ID: 'lender',
      PSP_CLIENT_SECRET: 'a-secret-of-the-psp-simulator',
      PSP_TLS_CERT: pki.server.certFile,
      PSP_TLS_KEY: pki.server.keyFile,
      PSP_TLS_CA: pki.ca.certFile,
    });
    const registry = new Registry();
    registerCertificateExpiry(registry, certificatesInUse(config));
    const text = await registry.metrics();
    const reported: Record<string, number> = Object.fromEntries(
      [
        ...text.matchAll(
          /^tls_certificate_expiry_timestamp_seconds\{certificate="(\w+)"\} (\d+)$/gm,
        ),
      ].map(([, name, value]): [string, number] => [name!, Number(value)]),
    );
    expect(Object.keys(reported).sort()).toEqual([
      'psp_ca',
      'psp_client',
      'temporal_ca',
      'temporal_client',
    ]);
    // The test PKI issues everything for one day (openssl -days 1).
    const inADay = Date.now() / 1000 + 86_400;
    for (const seconds of Object.values(reported))
      expect(Math.abs(seconds - inADay)).toBeLessThan(3600);

    const none = new Registry();
    registerCertificateExpiry(none, certificatesInUse(loadConfig(development)));
    expect(await none.metrics()).not.toMatch(/^tls_certificate_expiry_timestamp_seconds\{/m);
  });
});
