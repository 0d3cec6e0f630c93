import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

function selfSignedCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
  ]);
}

function issue(dir: string, ca: string, name: string, cn: string, extensions: string): Issued {
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
    '1',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  ]);
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  return {
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
  };
}

/**
 * A throwaway PKI made with openssl for TLS in tests and development (the PSP simulator's mutual
 * TLS): a CA, a server certificate for loopback and a client certificate it signed, and a client
 * certificate of another CA. Leaf certificates are proper end-entity ones (rustls, in the worker's
 * native connection, refuses a CA as a leaf). Valid for a day: made again at each start. In `dir`
 * when given, else in a new temporary folder.
 */
export function makePki(dir?: string): Pki {
  if (dir) mkdirSync(dir, { recursive: true });
  else dir = mkdtempSync(join(tmpdir(), 'pki-'));
  selfSignedCa(dir, 'ca');
  selfSignedCa(dir, 'other-ca');
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
    ),
    client: issue(dir, 'ca', 'client', 'embedded-credit-worker', leaf('clientAuth')),
    stranger: issue(dir, 'other-ca', 'stranger', 'stranger', leaf('clientAuth')),
  };
}
