import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config.js';
import { UPLOAD_LIMIT_BYTES } from '../../src/http/middleware/multipart-body.js';
import { projectRoot } from '../../src/project-root.js';
import { makeTestPki, type TestPki } from '../helpers/test-pki.js';

/**
 * Docker does not run on this project's machines, so docker-compose.yml is kept correct by reading:
 * this test reads it beside the README and .env.example and fails where they disagree (issue 42).
 */

const read = (file: string) => readFileSync(join(projectRoot, file), 'utf8');
const composeText = read('docker-compose.yml');
const readme = read('README.md');
const envExampleText = read('.env.example');

interface Service {
  image?: string;
  build?: unknown;
  restart?: string;
  ports?: unknown[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[] | string };
}
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);

/** `.env.example`'s variables (comments aside), in order. */
const envExample = new Map(
  envExampleText
    .split('\n')
    .filter((line) => /^[A-Z0-9_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);

/** The variables compose refuses to start without (`${VAR:?message}`). */
const required = new Set([...composeText.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]!));

/**
 * Compose's interpolation of one value, for the forms this file uses: `$$`, `${VAR}`,
 * `${VAR:-default}` and `${VAR:?message}` (empty counts as unset for both, as in compose). Any
 * other form fails the test, so a new one is not read wrongly. `lenient` reads a required
 * variable left empty as empty instead of refusing, to show what the service itself then says.
 */
function interpolate(value: string, env: Map<string, string>, lenient = false): string {
  return value.replace(/\$\$|\$\{([^}]*)\}|\$[A-Za-z_]/g, (match, body?: string) => {
    if (match === '$$') return '$';
    const form = body === undefined ? undefined : /^([A-Z0-9_]+)(?:(:-|:\?)(.*))?$/s.exec(body);
    if (!form) throw new Error(`an interpolation this test does not read: ${match}`);
    const [, name, operator, argument] = form;
    const set = env.get(name!) ?? '';
    if (set !== '') return set;
    if (operator === ':-') return argument!;
    if (operator === ':?' && !lenient) throw new Error(`compose refuses: ${argument}`);
    return '';
  });
}

/** A service's environment as compose hands it to the container. */
const environmentOf = (name: string, env: Map<string, string>, lenient = false) =>
  Object.fromEntries(
    Object.entries(compose.services[name]!.environment ?? {}).map(([key, value]) => [
      key,
      interpolate(String(value), env, lenient),
    ]),
  );

/** `host_ip:host_ports:container_port` of each published port (the short form only). */
function published(service: Service): { hostIp: string; hostPorts: string; container: string }[] {
  return (service.ports ?? []).map((entry) => {
    const match = typeof entry === 'string' && /^([\d.]+):([\d-]+):(\d+)$/.exec(entry);
    if (!match) throw new Error(`a port without its host address: ${JSON.stringify(entry)}`);
    return { hostIp: match[1]!, hostPorts: match[2]!, container: match[3]! };
  });
}

/** The rows of the README's table under "The production-like stack": service, host address. */
function readmePorts(): string[] {
  const section = readme.slice(readme.indexOf('### The production-like stack: `docker compose`'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| service')));
  return [...table.matchAll(/^\| `([a-z-]+)`\s*\| `([\d.]+:[\d-]+)`/gm)].map(
    (m) => `${m[1]} ${m[2]}`,
  );
}

/** Each secret its own, the forms the service takes: what a person fills .env with. */
function filledEnv(): Map<string, string> {
  const hex = () => randomBytes(32).toString('hex');
  const values: Record<string, () => string> = {
    LENDER_NAME: () => 'Crédito Exemplo SCD S.A.',
    LENDER_CNPJ: () => '11444777000161',
    LENDER_PIX_KEY: () => randomUUID(),
    SCR_INSTITUTION_CNPJ: () => '11444777000161',
    SCR_RESPONSIBLE_NAME: () => 'Ana Regulatória',
    SCR_RESPONSIBLE_EMAIL: () => 'scr@lender.example',
    SCR_RESPONSIBLE_PHONE: () => '1133334444',
    PSP_API_URL: () => 'https://pix.psp.example/api/v2',
    PSP_CLIENT_ID: () => 'embedded-credit',
    MINIO_KMS_SECRET_KEY: () => `embedded-credit-key:${randomBytes(32).toString('base64')}`,
  };
  return new Map(
    [...envExample.keys()].map((name) => [
      name,
      values[name]?.() ?? (name.endsWith('_KEYS') ? `k1:${hex()}` : hex()),
    ]),
  );
}

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('docker-compose.yml, read beside the README and .env.example', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makeTestPki();
  });
  /** The compose network's certificates (the `pki` volume) stand for themselves here. */
  const withTestPki = (env: Record<string, string>) => {
    const files: Record<string, string> = {
      '/pki/ca.pem': pki.ca.certFile,
      '/pki/client.pem': pki.client.certFile,
      '/pki/client.key': pki.client.keyFile,
    };
    return Object.fromEntries(
      Object.entries(env).map(([key, value]) => [key, files[value] ?? value]),
    );
  };

  it("publishes every port on the host's loopback only, the ports the README's table lists", () => {
    const publishedPorts = services.flatMap(([name, service]) =>
      published(service).map((port) => ({ name, ...port })),
    );
    expect(publishedPorts.filter((port) => port.hostIp !== '127.0.0.1')).toEqual([]);
    expect(
      publishedPorts.map((port) => `${port.name} ${port.hostIp}:${port.hostPorts}`).sort(),
    ).toEqual(readmePorts().sort());
    // The consoles and the mailbox are published (on loopback), PostgreSQL and Temporal not at all.
    for (const name of ['minio', 'mailpit', 'temporal-ui'])
      expect(publishedPorts.some((port) => port.name === name)).toBe(true);
    for (const name of ['postgres', 'temporal', 'worker'])
      expect(published(compose.services[name]!)).toEqual([]);
  });

  it('sets OPS_PORT apart from the partner port, both published, and the UI decodes on OPS_PORT', () => {
    const api = environmentOf('api', filledEnv());
    expect(api.OPS_PORT).toMatch(/^\d+$/);
    expect(api.OPS_PORT).not.toBe(api.PORT);
    expect(
      published(compose.services.api!)
        .map((port) => port.container)
        .sort(),
    ).toEqual([api.PORT, api.OPS_PORT].sort());
    const ui = environmentOf('temporal-ui', filledEnv());
    expect(new URL(ui.TEMPORAL_CODEC_ENDPOINT!).port).toBe(api.OPS_PORT);
  });

  it('requires exactly the variables .env.example lists, each empty there, and the README says to copy it', () => {
    expect([...envExample.keys()].sort()).toEqual([...required].sort());
    expect([...envExample.entries()].filter(([, value]) => value !== '')).toEqual([]);
    // Compose refuses an empty one, naming it.
    expect(() => environmentOf('api', envExample)).toThrow(/compose refuses: set /);
    const commands = readme.slice(readme.indexOf('### The production-like stack'));
    expect(commands).toMatch(
      /```sh\ncp \.env\.example \.env\n(#.*\n)*docker compose up --build\n```/,
    );
  });

  it("gives the API and the worker everything production requires once .env is filled, and the example's blanks are refused by the service too", () => {
    const filled = filledEnv();
    for (const name of ['api', 'worker']) {
      const env = withTestPki(environmentOf(name, filled));
      expect(problemsOf(env)).toEqual([]);
      expect(loadConfig(env)).toMatchObject({
        nodeEnv: 'production',
        lender: { name: 'Crédito Exemplo SCD S.A.', cnpj: '11444777000161' },
      });
    }
    // Left as the example has them (compose bypassed), each secret the service reads by its own
    // name stops it at start.
    const blank = withTestPki(environmentOf('api', envExample, true));
    const problems = problemsOf(blank).join('\n');
    const ownNames = [...required].filter((name) => blank[name] !== undefined);
    expect(ownNames.sort()).toEqual([
      'APPROVAL_DECISION_KEYS',
      'CONSOLE_SESSION_KEYS',
      'DATA_ENCRYPTION_KEYS',
      'LENDER_CNPJ',
      'LENDER_NAME',
      'LENDER_PIX_KEY',
      'OPS_TOKEN',
      'PSP_API_URL',
      'PSP_CLIENT_ID',
      'PSP_CLIENT_SECRET',
      'PSP_WEBHOOK_SECRET',
      'SCR_INSTITUTION_CNPJ',
      'SCR_RESPONSIBLE_EMAIL',
      'SCR_RESPONSIBLE_NAME',
      'SCR_RESPONSIBLE_PHONE',
      'SIGNING_LINK_KEYS',
      'TEMPORAL_PAYLOAD_KEYS',
      'TOKEN_SIGNING_KEYS',
    ]);
    for (const name of ownNames) expect(problems).toMatch(new RegExp(`^${name}: `, 'm'));
  });

  it("keeps PostgreSQL's owner, the application and Temporal on roles and passwords of their own", () => {
    const filled = filledEnv();
    const owner = environmentOf('postgres', filled);
    const temporal = environmentOf('temporal', filled);
    const app = new URL(environmentOf('api', filled).DATABASE_URL!);
    const migration = new URL(environmentOf('migrate', filled).MIGRATION_DATABASE_URL!);
    expect(owner.POSTGRES_PASSWORD).toBe(filled.get('POSTGRES_OWNER_PASSWORD'));
    expect(migration.username).toBe(owner.POSTGRES_USER);
    expect(migration.password).toBe(owner.POSTGRES_PASSWORD);
    const roles = [
      { user: owner.POSTGRES_USER, password: owner.POSTGRES_PASSWORD },
      { user: app.username, password: app.password },
      { user: temporal.POSTGRES_USER, password: temporal.POSTGRES_PWD },
    ];
    expect(new Set(roles.map((role) => role.user)).size).toBe(3);
    expect(new Set(roles.map((role) => role.password)).size).toBe(3);
    // Temporal creates no database (postgres-setup made its own), and the owner's password reaches
    // only the server, postgres-setup and migrate.
    expect(temporal.SKIP_DB_CREATE).toBe('true');
    const holders = services
      .filter(([, service]) => JSON.stringify(service).includes('${POSTGRES_OWNER_PASSWORD'))
      .map(([name]) => name);
    expect(holders.sort()).toEqual(['migrate', 'postgres', 'postgres-setup']);
    // No password is written into the file: each one comes from .env.
    for (const [name, service] of services)
      for (const [key, value] of Object.entries(service.environment ?? {}))
        if (/PASSWORD|PWD|SECRET|TOKEN|_KEYS$/.test(key))
          expect(`${name}.${key}=${value}`).toMatch(/=\$\{[A-Z0-9_]+:\?/);
  });

  it('restarts every long-running service with a health check; one-shot jobs do not restart', () => {
    const oneShots = new Set(
      services.flatMap(([, service]) =>
        Object.entries(Array.isArray(service.depends_on) ? {} : (service.depends_on ?? {}))
          .filter(([, dependency]) => dependency.condition === 'service_completed_successfully')
          .map(([name]) => name),
      ),
    );
    expect(oneShots.has('migrate')).toBe(true);
    for (const [name, service] of services) {
      // The long form everywhere, so each dependency says what it waits for.
      expect(Array.isArray(service.depends_on), name).toBe(false);
      if (oneShots.has(name)) {
        expect({ name, restart: service.restart }).toEqual({ name, restart: 'no' });
      } else {
        expect({ name, restart: service.restart }).toEqual({ name, restart: 'unless-stopped' });
        expect(service.healthcheck?.test, name).toBeDefined();
      }
    }
  });

  it('points only at README sections that exist', () => {
    const pointers = [composeText, envExampleText, read('Dockerfile')].flatMap((text) =>
      [...text.matchAll(/README, "([^"]+)"/g)].map((m) => m[1]!),
    );
    expect(pointers.length).toBeGreaterThan(0);
    const headings = [...readme.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!);
    const leads = [...readme.matchAll(/\*\*([^*]+?)\.?\*\*/g)].map((m) => m[1]!);
    for (const pointer of pointers) expect([...headings, ...leads]).toContain(pointer);
  });

  it('keeps .env files and keys out of the image', () => {
    const patterns = read('.dockerignore')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((glob) => new RegExp(`^${glob.replace(/[.+]/g, '\\$&').replace(/\*/g, '[^/]*')}$`));
    for (const file of ['.env', '.env.production', '.env.local', 'client.key', 'ca.pem'])
      expect(
        patterns.some((pattern) => pattern.test(file)),
        file,
      ).toBe(true);
  });
});

describe('the TLS proxy example (docs/operations/tls/nginx.conf), read beside compose', () => {
  const nginx = read('docs/operations/tls/nginx.conf');
  /** Each `server { … }` block of the file (nginx's braces nest; locations are one level in). */
  const servers = [...nginx.matchAll(/\n {2}server \{\n([\s\S]*?)\n {2}\}/g)].map((m) => m[1]!);
  const partnerServer = servers.find((block) => /listen 443 ssl;/.test(block))!;
  const pspServer = servers.find((block) => /ssl_verify_client on;/.test(block))!;

  it("proxies to the partner API's published ports, and to nothing else", () => {
    const published = compose.services
      .api!.ports!.map(String)
      .find((port) => port.endsWith(':3000'));
    const [, from, to] = /^127\.0\.0\.1:(\d+)-(\d+):3000$/.exec(published!)!;
    const expected = Array.from(
      { length: Number(to) - Number(from) + 1 },
      (_, i) => `127.0.0.1:${Number(from) + i}`,
    );
    const upstream = /upstream partner_api \{([\s\S]*?)\}/.exec(nginx)![1]!;
    expect([...upstream.matchAll(/server (\S+);/g)].map((m) => m[1])).toEqual(expected);
    expect([...nginx.matchAll(/proxy_pass (\S+);/g)].map((m) => m[1])).toEqual(
      Array(2).fill('http://partner_api'),
    );
  });

  it('keeps ops, metrics and the PSP door off the partner server, and takes a full upload', () => {
    for (const path of [
      'location /ops/ { return 404; }',
      'location = /metrics { return 404; }',
      'location /psp/ { return 404; }',
    ])
      expect(partnerServer).toContain(path);
    const limit = /client_max_body_size (\d+)m;/.exec(partnerServer)![1]!;
    expect(Number(limit) * 1024 * 1024).toBeGreaterThan(UPLOAD_LIMIT_BYTES);
    expect(partnerServer).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
  });

  it("writes the PSP's verified certificate in the headers the service reads by default", () => {
    const config = loadConfig({
      NODE_ENV: 'development',
      DATABASE_URL: 'postgres://localhost/embedded_credit',
      FILE_STORE: 'local',
      PSP_WEBHOOK_AUTH: 'mtls',
      PSP_MTLS_SUBJECT: 'CN=psp.example.com,O=Example PSP',
    });
    const { mtls } = config.pspAuthentication as {
      mtls: { verifyHeader: string; subjectHeader: string };
    };
    expect(pspServer).toContain(`proxy_set_header ${mtls.verifyHeader} $ssl_client_verify;`);
    expect(pspServer).toContain(`proxy_set_header ${mtls.subjectHeader} $ssl_client_s_dn;`);
    expect(pspServer).toMatch(/location \/psp\/v1\/ \{[\s\S]*proxy_pass/);
    expect(pspServer).toContain('location / { return 404; }');
  });
});
