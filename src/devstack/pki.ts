import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Issued {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

export interface Pki {
  dir: string;
  ca: { cert: string; certFile: string };
  /** For `localhost` and 127.0.0.1 (serverAuth). */
  server: Issued;
  /** CN `embedded-credit-worker` (clientAuth). */
  client: Issued;
  /** A client certificate from a CA nobody trusts. */
  stranger: Issued;
}

const openssl = (dir: string, args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

function selfSignedCa(dir: string, name: string, days: number): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    String(days),
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
  ]);
}

function issue(
  dir: string,
  ca: string,
  name: string,
  cn: string,
  extensions: string,
  days: number,
): Issued {
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${cn}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
  ]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    String(days),
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  ]);
  return issued(dir, name);
}

function issued(dir: string, name: string): Issued {
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  return {
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
  };
}

const pkiIn = (dir: string): Pki => ({
  dir,
  ca: { cert: readFileSync(join(dir, 'ca.pem'), 'utf8'), certFile: join(dir, 'ca.pem') },
  server: issued(dir, 'server'),
  client: issued(dir, 'client'),
  stranger: issued(dir, 'stranger'),
});

/**
 * A throwaway PKI made with openssl for TLS in tests and development (the PSP simulator's mutual
 * TLS): a CA, a server certificate for loopback and a client certificate it signed, and a client
 * certificate of another CA. Leaf certificates are proper end-entity ones (rustls, in the worker's
 * native connection, refuses a CA as a leaf). Valid for `days` (a day: tests and benches make one at
 * each start). In `dir` when given, else in a new temporary folder.
 */
export function makePki(dir?: string, days = 1): Pki {
  if (dir) mkdirSync(dir, { recursive: true });
  else dir = mkdtempSync(join(tmpdir(), 'pki-'));
  selfSignedCa(dir, 'ca', days);
  selfSignedCa(dir, 'other-ca', days);
  const leaf = (usage: string, san = '') =>
    `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=${usage}\n${san}`;
  return {
    dir,
    ca: { cert: readFileSync(join(dir, 'ca.pem'), 'utf8'), certFile: join(dir, 'ca.pem') },
    server: issue(
      dir,
      'ca',
      'server',
      'localhost',
      leaf('serverAuth', 'subjectAltName=DNS:localhost,IP:127.0.0.1\n'),
      days,
    ),
    client: issue(dir, 'ca', 'client', 'embedded-credit-worker', leaf('clientAuth'), days),
    stranger: issue(dir, 'other-ca', 'stranger', 'stranger', leaf('clientAuth'), days),
  };
}

const PKI_FILES = [
  'ca.pem',
  'server.pem',
  'server.key',
  'client.pem',
  'client.key',
  'stranger.pem',
];

/**
 * The PKI kept in `dir` (`npm run dev`'s, in `.data/psp-pki`): made once, valid for `days`, and
 * made again only when a file is missing or a certificate has less than a day left, so the paths
 * the service is given stay the same across starts.
 */
export function keptPki(dir: string, days = 365): Pki {
  const dayFromNow = Date.now() + 86_400_000;
  const fresh =
    PKI_FILES.every((file) => existsSync(join(dir, file))) &&
    ['ca.pem', 'server.pem', 'client.pem'].every(
      (file) => Date.parse(new X509Certificate(readFileSync(join(dir, file))).validTo) > dayFromNow,
    );
  return fresh ? pkiIn(dir) : makePki(dir, days);
}
