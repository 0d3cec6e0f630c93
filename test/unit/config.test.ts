import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEVELOPMENT_OPS_TOKEN,
  loadConfig,
  SANDBOX_LENDER,
  SANDBOX_PIX_KEY,
} from '../../src/config.js';
import { createTokenService, TokenError } from '../../src/auth/tokens.js';
import { keyRing } from '../../src/domain/key-ring.js';
import { createSealedBox } from '../../src/domain/sealed-box.js';

const base = { DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db', S3_BUCKET: 'documents' };
const development = { ...base, NODE_ENV: 'development' };

/** A production environment that passes every rule: each test breaks one thing. */
const production = {
  ...base,
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://api.credit.example',
  OPS_TOKEN: 'ops-0123456789abcdef0123456789abcdef',
  TOKEN_SIGNING_KEYS: 'k1:token-signing-0123456789abcdef0123456789',
  DATA_ENCRYPTION_KEYS: 'k1:data-encryption-0123456789abcdef0123456789',
  SIGNING_LINK_KEYS: 'k1:signing-link-0123456789abcdef0123456789',
  TEMPORAL_PAYLOAD_KEYS: 'k1:temporal-payload-0123456789abcdef0123456789',
  APPROVAL_DECISION_KEYS: 'k1:approval-decision-0123456789abcdef0123456789',
  CONSOLE_SESSION_KEYS: 'k1:console-session-0123456789abcdef0123456789',
  SMTP_URL: 'smtps://mailer:secret@smtp.credit.example:465',
  MAIL_FROM: 'Crédito <nao-responda@credit.example>',
  LENDER_PIX_KEY: '11222333000181',
  LENDER_NAME: 'Crédito Exemplo SCD S.A.',
  LENDER_CNPJ: '11444777000161',
  SCR_INSTITUTION_CNPJ: '11444777000161',
  SCR_RESPONSIBLE_NAME: 'Ana Regulatória',
  SCR_RESPONSIBLE_EMAIL: 'scr@lender.example',
  SCR_RESPONSIBLE_PHONE: '1133334444',
  PSP_WEBHOOK_SECRET: 'psp-webhook-0123456789abcdef0123456789',
  TEMPORAL_ADDRESS: 'temporal.credit.example:7233',
  TEMPORAL_API_KEY: 'temporal-api-key-0123456789abcdef',
  PSP_API_URL: 'https://pix.psp.example/api/v2',
  PSP_CLIENT_ID: 'embedded-credit',
  PSP_CLIENT_SECRET: 'psp-client-secret-0123456789abcdef',
  PSP_TLS_CERT: '/run/secrets/psp/client.pem',
  PSP_TLS_KEY: '/run/secrets/psp/client.key',
  PSP_TLS_CA: '/run/secrets/psp/ca.pem',
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

const ring = (id: string, secret: string) => keyRing([{ id, secret: Buffer.from(secret) }]);

describe('configuration', () => {
  it('applies the documented defaults in development', () => {
    const config = loadConfig(development);
    expect(config).toMatchObject({
      port: 3000,
      publicBaseUrl: 'http://localhost:3000',
      temporal: { address: 'localhost:7233', namespace: 'default', uiPort: 8233, devPort: 7233 },
      embeddedPostgresPort: 5433,
      opsToken: DEVELOPMENT_OPS_TOKEN,
      sandboxReviewDelayMs: 10_000,
      webhookAllowPrivateTargets: false,
      trustedProxyCount: 0,
      maxCredentialsPerPartner: 10,
      webhookAllowedPorts: [443, 8443],
    });
    // Development gets a published key per purpose, never one key for two.
    const ids = Object.values(config.keys).map((r) => r.current.secret.toString());
    expect(new Set(ids).size).toBe(5);
  });

  it('reads durations in the ms format', () => {
    const config = loadConfig({
      ...development,
      SANDBOX_REVIEW_DELAY: '2s',
      OFFER_RENEWAL_DELAY: '1d',
    });
    expect(config.sandboxReviewDelayMs).toBe(2000);
    expect(config.offerRenewalDelayMs).toBe(86_400_000);
  });

  it('passes a production environment with its own keys', () => {
    expect(problemsOf(production)).toEqual([]);
  });

  it('treats an unset NODE_ENV as production: no development default is ever assumed', () => {
    const { NODE_ENV: _, ...unset } = production;
    expect(loadConfig(unset).nodeEnv).toBe('production');
    expect(problemsOf(base)).toContain('OPS_TOKEN: required outside development');
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({ PORT: 'eighty', SANDBOX_REVIEW_DELAY: 'soon' });
    const text = problems.join('\n');
    expect(text).toMatch(/^PORT: /m);
    expect(text).toMatch(/^DATABASE_URL: /m);
    expect(text).toMatch(/^SANDBOX_REVIEW_DELAY: expected a duration/m);
    for (const name of [
      'OPS_TOKEN',
      'TOKEN_SIGNING_KEYS',
      'DATA_ENCRYPTION_KEYS',
      'SIGNING_LINK_KEYS',
      'TEMPORAL_PAYLOAD_KEYS',
      'APPROVAL_DECISION_KEYS',
      'CONSOLE_SESSION_KEYS',
      'SMTP_URL',
      'MAIL_FROM',
      'LENDER_PIX_KEY',
    ])
      expect(text).toMatch(new RegExp(`^${name}: required outside development$`, 'm'));
    expect(text).toMatch(/^LENDER_NAME: required outside development \(the creditor/m);
    expect(text).toMatch(/^LENDER_CNPJ: required outside development \(the creditor/m);
    expect(text).toMatch(
      /^PSP_WEBHOOK_SECRET: required outside development \(or PSP_WEBHOOK_AUTH=mtls/m,
    );
    expect(text).toMatch(/^S3_BUCKET: required with FILE_STORE=s3/m);
    expect(text).toMatch(/^PUBLIC_BASE_URL: required outside development/m);
    expect(text).toMatch(/^PSP_API_URL, .*PSP_TLS_CA: required outside development/m);
    for (const name of [
      'SCR_INSTITUTION_CNPJ',
      'SCR_RESPONSIBLE_NAME',
      'SCR_RESPONSIBLE_EMAIL',
      'SCR_RESPONSIBLE_PHONE',
    ])
      expect(text).toMatch(new RegExp(`^${name}: required outside development \\(the Banco`, 'm'));
    expect(problems).toHaveLength(23);
  });

  it('takes OPS_PORT only apart from the partner port (issue 42)', () => {
    expect(loadConfig({ ...production, OPS_PORT: '3100' })).toMatchObject({
      port: 3000,
      opsPort: 3100,
    });
    const same =
      'OPS_PORT: the same port as PORT; the ops listener needs one of its own (unset, the ops API shares PORT)';
    expect(problemsOf({ ...production, OPS_PORT: '3000' })).toEqual([same]);
    expect(problemsOf({ ...development, PORT: '4000', OPS_PORT: '4000' })).toEqual([same]);
    expect(loadConfig(production).opsPort).toBeUndefined();
  });

  it('names the SCR 3040’s institution and responsible: checked, required outside development (contract §19)', () => {
    expect(loadConfig(production).scr).toEqual({
      cnpj: '11444777000161',
      responsibleName: 'Ana Regulatória',
      responsibleEmail: 'scr@lender.example',
      responsiblePhone: '1133334444',
    });
    expect(loadConfig(development).scr).toBeNull();
    expect(
      problemsOf({
        ...production,
        SCR_INSTITUTION_CNPJ: '11444777000162',
        SCR_RESPONSIBLE_EMAIL: 'not an address',
        SCR_RESPONSIBLE_PHONE: '33334444',
      }),
    ).toEqual([
      'SCR_INSTITUTION_CNPJ: check digits do not match',
      expect.stringMatching(/^SCR_RESPONSIBLE_EMAIL: /),
      'SCR_RESPONSIBLE_PHONE: expected the area code and number, 10 or 11 digits',
    ]);
  });

  it("names the lender outside development: required, never the sandbox's fictitious one (issue 42)", () => {
    expect(loadConfig(production).lender).toEqual({
      name: 'Crédito Exemplo SCD S.A.',
      cnpj: '11444777000161',
    });
    const { LENDER_NAME: _name, LENDER_CNPJ: _cnpj, ...unset } = production;
    expect(problemsOf(unset)).toEqual([
      "LENDER_NAME: required outside development (the creditor every contract names; unset, contracts would name the sandbox's fictitious lender)",
      "LENDER_CNPJ: required outside development (the creditor every contract names; unset, contracts would name the sandbox's fictitious lender)",
    ]);
    expect(problemsOf({ ...production, LENDER_NAME: ' ' })).toEqual([
      expect.stringMatching(/^LENDER_NAME: required outside development/),
    ]);
    expect(
      problemsOf({ ...production, ...SANDBOX_LENDER, LENDER_NAME: 'Crédito Exemplo SCD S.A.' }),
    ).toEqual([
      "LENDER_CNPJ: is the sandbox's fictitious lender; set the lender's own for contracts outside development",
    ]);
    expect(problemsOf({ ...production, LENDER_NAME: SANDBOX_LENDER.LENDER_NAME })).toEqual([
      "LENDER_NAME: is the sandbox's fictitious lender; set the lender's own for contracts outside development",
    ]);
    expect(problemsOf({ ...production, LENDER_CNPJ: '11444777000162' })).toEqual([
      'LENDER_CNPJ: check digits do not match',
    ]);
    // Development and tests keep naming the fictitious lender without being told.
    expect(loadConfig(development).lender).toEqual({
      name: SANDBOX_LENDER.LENDER_NAME,
      cnpj: SANDBOX_LENDER.LENDER_CNPJ,
    });
  });

  it('proves approval decisions with keys of their own: a development default, refused elsewhere as the other keys are (issue 37)', () => {
    const development = loadConfig({ ...base, NODE_ENV: 'test' });
    expect(development.keys.approvalDecision.current.id).toBe('dev');
    expect(loadConfig(production).keys.approvalDecision.current).toMatchObject({ id: 'k1' });
    const { APPROVAL_DECISION_KEYS: _, ...unset } = production;
    expect(problemsOf(unset)).toEqual(['APPROVAL_DECISION_KEYS: required outside development']);
    expect(problemsOf({ ...production, APPROVAL_DECISION_KEYS: 'k1:too-short' })).toEqual([
      'APPROVAL_DECISION_KEYS: key k1: must be at least 32 bytes',
    ]);
    expect(
      problemsOf({
        ...production,
        APPROVAL_DECISION_KEYS: 'dev:development-approval-decision-key-not-for-production',
      }),
    ).toEqual(['APPROVAL_DECISION_KEYS (dev): is a development default published in the source']);
    expect(
      problemsOf({
        ...production,
        APPROVAL_DECISION_KEYS: production.DATA_ENCRYPTION_KEYS.replace('k1:', 'k2:'),
      }),
    ).toEqual([
      'APPROVAL_DECISION_KEYS (k2): the same secret as DATA_ENCRYPTION_KEYS (k1); each purpose needs its own',
    ]);
  });

  it('fails closed outside development: published, short or shared secrets, http links, private targets', () => {
    const problems = problemsOf({
      ...production,
      OPS_TOKEN: DEVELOPMENT_OPS_TOKEN,
      TOKEN_SIGNING_KEYS: 'dev:development-token-signing-key-not-for-production',
      DATA_ENCRYPTION_KEYS: 'k1:short',
      SIGNING_LINK_KEYS:
        'k2:shared-secret-0123456789abcdef0123456789,k1:old-one-0123456789abcdef0123456789',
      SMTP_URL: 'smtp://smtp.credit.example:25',
      PUBLIC_BASE_URL: 'http://api.credit.example',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'OPS_TOKEN: is a development default published in the source',
        'TOKEN_SIGNING_KEYS (dev): is a development default published in the source',
        'DATA_ENCRYPTION_KEYS: key k1: must be at least 32 bytes',
        'PUBLIC_BASE_URL: must be https outside development (loopback aside)',
        'WEBHOOK_ALLOW_PRIVATE_TARGETS: is for local development only and cannot be set outside it',
        'WEBHOOK_ALLOW_LOOPBACK_HTTP: is for local development only and cannot be set outside it',
      ]),
    );
    const shared = problemsOf({
      ...production,
      DATA_ENCRYPTION_KEYS: production.TOKEN_SIGNING_KEYS.replace('k1:', 'other:'),
      SIGNING_LINK_KEYS: `k2:${production.OPS_TOKEN}`,
    });
    expect(shared).toEqual([
      'DATA_ENCRYPTION_KEYS (other): the same secret as TOKEN_SIGNING_KEYS (k1); each purpose needs its own',
      'SIGNING_LINK_KEYS (k2): the same secret as OPS_TOKEN; each purpose needs its own',
    ]);
  });

  it('encrypts workflow payloads with keys of their own: a development default, refused elsewhere as the other keys are', () => {
    const dev = loadConfig(development).temporal;
    expect(dev.payloadKeys.current.id).toBe('dev');
    expect(dev).toMatchObject({
      payloadEncryption: 'on',
      uiOrigin: 'http://localhost:8233',
      tls: false,
      apiKey: undefined,
    });
    const rotated = loadConfig({
      ...production,
      TEMPORAL_PAYLOAD_KEYS:
        'k2:temporal-payload-new-0123456789abcdef01,k1:temporal-payload-0123456789abcdef0123456789',
    }).temporal;
    expect(rotated.payloadKeys.all.map((k) => k.id)).toEqual(['k2', 'k1']);
    // decode-only, an upgrade's mode, takes payloads in clear: outside production only.
    expect(
      loadConfig({ ...development, TEMPORAL_PAYLOAD_ENCRYPTION: 'decode-only' }).temporal
        .payloadEncryption,
    ).toBe('decode-only');
    expect(
      problemsOf({
        ...production,
        TEMPORAL_PAYLOAD_KEYS: 'dev:development-temporal-payload-key-not-for-production',
      }),
    ).toEqual(['TEMPORAL_PAYLOAD_KEYS (dev): is a development default published in the source']);
    expect(problemsOf({ ...production, TEMPORAL_PAYLOAD_KEYS: 'k1:short' })).toEqual([
      'TEMPORAL_PAYLOAD_KEYS: key k1: must be at least 32 bytes',
    ]);
    expect(
      problemsOf({
        ...production,
        TEMPORAL_PAYLOAD_KEYS: production.DATA_ENCRYPTION_KEYS.replace('k1:', 'p1:'),
      }),
    ).toEqual([
      'TEMPORAL_PAYLOAD_KEYS (p1): the same secret as DATA_ENCRYPTION_KEYS (k1); each purpose needs its own',
    ]);
    expect(problemsOf({ ...development, TEMPORAL_PAYLOAD_ENCRYPTION: 'off' })[0]).toMatch(
      /^TEMPORAL_PAYLOAD_ENCRYPTION: /,
    );
  });

  it('takes the Temporal UI origin the codec endpoint answers: an origin, https outside development', () => {
    expect(
      loadConfig({ ...production, TEMPORAL_UI_ORIGIN: 'https://temporal.credit.example/' }).temporal
        .uiOrigin,
    ).toBe('https://temporal.credit.example');
    expect(problemsOf({ ...production, TEMPORAL_UI_ORIGIN: 'http://localhost:8080' })).toEqual([]);
    expect(problemsOf({ ...production, TEMPORAL_UI_ORIGIN: 'http://temporal.example' })).toEqual([
      'TEMPORAL_UI_ORIGIN: must be https outside development (loopback aside): its pages get decoded payloads',
    ]);
    for (const bad of ['https://ui.example/path', 'ftp://ui.example', 'ui.example'])
      expect(problemsOf({ ...development, TEMPORAL_UI_ORIGIN: bad })).toEqual([
        'TEMPORAL_UI_ORIGIN: expected an origin, scheme://host[:port]',
      ]);
  });

  it('authenticates the PSP by a secret of its own, or by mutual TLS in front when told so', () => {
    const { PSP_WEBHOOK_SECRET: _, ...unsigned } = production;
    expect(loadConfig(production).pspWebhookSecret).toBe(production.PSP_WEBHOOK_SECRET);
    const mtls = {
      ...unsigned,
      PSP_WEBHOOK_AUTH: 'mtls',
      PSP_MTLS_TRUSTED_PROXIES: '10.0.0.5, 10.1.0.0/16,fd00::1',
      PSP_MTLS_SUBJECT: 'CN=psp.example.com,O=PSP',
    };
    expect(loadConfig(mtls)).toMatchObject({
      pspWebhookSecret: null,
      pspAuthentication: {
        mtls: {
          trustedProxies: ['10.0.0.5', '10.1.0.0/16', 'fd00::1'],
          subject: 'CN=psp.example.com,O=PSP',
          verifyHeader: 'X-SSL-Client-Verify',
          subjectHeader: 'X-SSL-Client-S-DN',
        },
      },
    });
    expect(problemsOf({ ...mtls, PSP_WEBHOOK_SECRET: production.PSP_WEBHOOK_SECRET })).toEqual([
      'PSP_WEBHOOK_SECRET: set, but PSP_WEBHOOK_AUTH=mtls ignores it; choose one',
    ]);
    // mTLS fails closed (issue 37, finding 5): not without the proxy and the PSP's subject.
    expect(problemsOf({ ...unsigned, PSP_WEBHOOK_AUTH: 'mtls' })).toEqual([
      "PSP_MTLS_SUBJECT: required with PSP_WEBHOOK_AUTH=mtls: the subject (DN) of the PSP's client certificate, as the proxy passes it; without it nothing would be checked",
      "PSP_MTLS_TRUSTED_PROXIES: required outside development with PSP_WEBHOOK_AUTH=mtls: the addresses of the proxy that verifies the PSP's certificate (its headers are believed from them only)",
    ]);
    expect(problemsOf({ ...mtls, PSP_MTLS_TRUSTED_PROXIES: '10.0.0.5,proxy.internal' })).toEqual([
      'PSP_MTLS_TRUSTED_PROXIES: "proxy.internal" is not an address or CIDR range',
    ]);
    // Development: a proxy on loopback unless told otherwise; the subject is still required.
    const { PSP_MTLS_TRUSTED_PROXIES: _p, ...devMtls } = { ...mtls, NODE_ENV: 'development' };
    expect(loadConfig(devMtls).pspAuthentication).toMatchObject({
      mtls: { trustedProxies: ['127.0.0.0/8', '::1'] },
    });
    expect(problemsOf({ ...development, PSP_WEBHOOK_AUTH: 'mtls' })).toEqual([
      "PSP_MTLS_SUBJECT: required with PSP_WEBHOOK_AUTH=mtls: the subject (DN) of the PSP's client certificate, as the proxy passes it; without it nothing would be checked",
    ]);
    expect(
      problemsOf({
        ...production,
        PSP_WEBHOOK_SECRET: 'dev-psp-webhook-secret-not-for-production',
      }),
    ).toEqual(['PSP_WEBHOOK_SECRET: is a development default published in the source']);
    expect(problemsOf({ ...production, PSP_WEBHOOK_SECRET: 'psp-0123456789abcdef' })).toEqual([
      'PSP_WEBHOOK_SECRET: must be at least 32 bytes outside development',
    ]);
    expect(problemsOf({ ...production, PSP_WEBHOOK_SECRET: production.OPS_TOKEN })).toEqual([
      'OPS_TOKEN: the same secret as PSP_WEBHOOK_SECRET; each purpose needs its own',
    ]);
    // Development signs with the published secret and charges name the sandbox's key.
    const dev = loadConfig(development);
    expect(dev.pspWebhookSecret).toBe('dev-psp-webhook-secret-not-for-production');
    expect(dev.pix.key).toBe(SANDBOX_PIX_KEY);
  });

  it('requires the lender’s PSP outside development, its settings together, over https (contract §16)', () => {
    expect(loadConfig(production).psp).toEqual({
      apiUrl: 'https://pix.psp.example/api/v2',
      clientId: 'embedded-credit',
      clientSecret: 'psp-client-secret-0123456789abcdef',
      tls: {
        certFile: '/run/secrets/psp/client.pem',
        keyFile: '/run/secrets/psp/client.key',
        caFile: '/run/secrets/psp/ca.pem',
      },
    });
    const {
      PSP_API_URL: _url,
      PSP_CLIENT_ID: _id,
      PSP_CLIENT_SECRET: _secret,
      PSP_TLS_CERT: _cert,
      PSP_TLS_KEY: _key,
      PSP_TLS_CA: _ca,
      ...withoutPsp
    } = production;
    expect(problemsOf(withoutPsp)).toEqual([
      expect.stringMatching(/^PSP_API_URL, PSP_CLIENT_ID, .*: required outside development/),
    ]);
    // Development runs without a PSP, but half of its settings are refused everywhere.
    expect(loadConfig(development).psp).toBeNull();
    expect(problemsOf({ ...development, PSP_API_URL: 'https://127.0.0.1:8443' })).toEqual(
      ['PSP_CLIENT_ID', 'PSP_CLIENT_SECRET', 'PSP_TLS_CERT', 'PSP_TLS_KEY', 'PSP_TLS_CA'].map(
        (name) => `${name}: required with PSP_API_URL (the PSP's settings go together)`,
      ),
    );
    expect(problemsOf({ ...production, PSP_API_URL: 'http://pix.psp.example' })).toEqual([
      'PSP_API_URL: expected an https URL',
    ]);
  });

  it('stops at start on late charges above the legal caps (contract §13), and takes them at the caps', () => {
    expect(
      problemsOf({ ...development, LATE_FEE_RATE: '0.021', LATE_INTEREST_MONTHLY_RATE: '0.0101' }),
    ).toEqual([
      'LATE_FEE_RATE: at most 0.02: CDC art. 52 §1 caps the late fee at 2 % of the installment',
      'LATE_INTEREST_MONTHLY_RATE: at most 0.01: late interest (juros de mora) is capped at 1 % a month',
    ]);
    expect(
      loadConfig({ ...development, LATE_FEE_RATE: '0.02', LATE_INTEREST_MONTHLY_RATE: '0.005' })
        .lateCharges,
    ).toEqual({ feeRate: '0.02', monthlyInterestRate: '0.005' });
    // Not a rate at all: said once, as such.
    expect(problemsOf({ ...development, LATE_FEE_RATE: 'abc' })).toEqual([
      'LATE_FEE_RATE: expected a decimal rate between 0 and 1, such as 0.0038',
    ]);
  });

  it('fails closed on each gap the second review found (issue 37, finding 9), each with its own message', () => {
    const { PUBLIC_BASE_URL: _, ...noBaseUrl } = production;
    expect(problemsOf(noBaseUrl)).toEqual([
      'PUBLIC_BASE_URL: required outside development (the https address partners and borrowers reach: signing links, e-mails, token issuer); unset, links would name http://localhost',
    ]);
    expect(problemsOf({ ...production, TEMPORAL_PAYLOAD_ENCRYPTION: 'decode-only' })).toEqual([
      'TEMPORAL_PAYLOAD_ENCRYPTION: decode-only writes workflow payloads in clear and takes unencrypted ones (an Update forged at the Temporal frontend would be obeyed): for rehearsing an upgrade outside production only',
    ]);

    // Temporal across the network: TLS, and the service authenticated (mTLS or an API key).
    const { TEMPORAL_API_KEY: __, ...noApiKey } = production;
    expect(problemsOf(noApiKey)).toEqual([
      "TEMPORAL_TLS: the connection to Temporal at temporal.credit.example:7233 would be plaintext; outside development it is TLS (TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME for a private CA, TEMPORAL_TLS=true for the system's roots)",
      'TEMPORAL_TLS_CERT: Temporal at temporal.credit.example:7233 must authenticate this service outside development: mutual TLS (TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY, the frontend requiring client certificates) or an API key (TEMPORAL_API_KEY)',
    ]);
    expect(problemsOf({ ...noApiKey, TEMPORAL_TLS: 'true' })).toEqual([
      'TEMPORAL_TLS_CERT: Temporal at temporal.credit.example:7233 must authenticate this service outside development: mutual TLS (TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY, the frontend requiring client certificates) or an API key (TEMPORAL_API_KEY)',
    ]);
    // A server on this machine's loopback is reached without leaving it.
    expect(problemsOf({ ...noApiKey, TEMPORAL_ADDRESS: '127.0.0.1:7233' })).toEqual([]);

    // Mail: TLS from the start, or STARTTLS required; a certificate checked.
    for (const smtp of [
      'smtp://mailer:secret@smtp.credit.example:587',
      'smtp://smtp.credit.example:25?requireTLS=false',
    ])
      expect(problemsOf({ ...production, SMTP_URL: smtp })).toEqual([
        'SMTP_URL: plaintext outside development (smtp:// falls back to clear when STARTTLS is not offered): use smtps://, or smtp://…?requireTLS=true',
      ]);
    expect(
      problemsOf({
        ...production,
        SMTP_URL: 'smtp://mailer:secret@smtp.credit.example:587?requireTLS=true',
      }),
    ).toEqual([]);
    expect(
      problemsOf({
        ...production,
        SMTP_URL: 'smtps://smtp.credit.example:465?tls.rejectUnauthorized=false',
      }),
    ).toEqual([
      "SMTP_URL: tls.rejectUnauthorized=false takes any certificate; outside development the relay's is checked",
    ]);
    expect(problemsOf({ ...production, SMTP_URL: 'smtp://127.0.0.1:25' })).toEqual([]);

    // Secrets of 32 bytes that a guess finds: one character, a pair, a word repeated.
    expect(problemsOf({ ...production, OPS_TOKEN: 'a'.repeat(40) })).toEqual([
      'OPS_TOKEN: too predictable to protect a deployment (is one string of 1 character repeated); generate one, e.g. openssl rand -hex 32',
    ]);
    expect(problemsOf({ ...production, OPS_TOKEN: 'passwordpasswordpasswordpassword' })).toEqual([
      'OPS_TOKEN: too predictable to protect a deployment (is one string of 8 characters repeated); generate one, e.g. openssl rand -hex 32',
    ]);
    expect(
      problemsOf({ ...production, PSP_WEBHOOK_SECRET: 'abcabcabcabcabcabcabcabcabcabcabcx' }),
    ).toEqual([
      'PSP_WEBHOOK_SECRET: too predictable to protect a deployment (its characters carry about 58 bits, at least 80 are needed); generate one, e.g. openssl rand -hex 32',
    ]);
    expect(problemsOf({ ...production, TOKEN_SIGNING_KEYS: `k1:${'z'.repeat(32)}` })).toEqual([
      'TOKEN_SIGNING_KEYS (k1): too predictable to protect a deployment (is one string of 1 character repeated); generate one, e.g. openssl rand -hex 32',
    ]);
    // What a generator makes passes, always: 16 random bytes in hex are the shortest allowed.
    for (let i = 0; i < 200; i++)
      expect(problemsOf({ ...production, OPS_TOKEN: randomBytes(16).toString('hex') })).toEqual([]);
  });

  it('allows an http base URL on loopback only, and names the old variables it renamed', () => {
    expect(problemsOf({ ...production, PUBLIC_BASE_URL: 'http://127.0.0.1:3000' })).toEqual([]);
    expect(problemsOf({ ...production, TOKEN_SIGNING_KEY: 'x'.repeat(40) })).toEqual([
      'TOKEN_SIGNING_KEY: renamed to TOKEN_SIGNING_KEYS, a list of id:secret (see README)',
    ]);
  });

  it('parses key rings: the first key is current, ids are unique and short, secrets at least 32 bytes', () => {
    const config = loadConfig({
      ...production,
      SIGNING_LINK_KEYS:
        'new:signing-link-new-0123456789abcdef0123,old:signing-link-0123456789abcdef0123456789',
    });
    expect(config.keys.signingLink.current.id).toBe('new');
    expect(config.keys.signingLink.all.map((k) => k.id)).toEqual(['new', 'old']);
    expect(problemsOf({ ...production, SIGNING_LINK_KEYS: 'a:x,a:y,no secret' })).toEqual([
      'SIGNING_LINK_KEYS: key 1: must be at least 32 bytes'.replace('key 1', 'key a'),
      'SIGNING_LINK_KEYS: key a: the id appears twice',
      'SIGNING_LINK_KEYS: key a: must be at least 32 bytes',
      'SIGNING_LINK_KEYS: key 3: expected id:secret, the id 1-32 letters, digits, _ or -',
    ]);
  });
});

describe('keys with ids', () => {
  const old = 'old-data-key-0123456789abcdef0123456789';
  const fresh = 'new-data-key-0123456789abcdef0123456789';

  it('sealed values name their key: after a rotation the old ones still open, new ones use the new key', () => {
    const before = createSealedBox(ring('k1', old)).seal('whsec_1');
    expect(before.startsWith('v2.k1.')).toBe(true);
    const rotated = createSealedBox(
      keyRing([
        { id: 'k2', secret: Buffer.from(fresh) },
        { id: 'k1', secret: Buffer.from(old) },
      ]),
    );
    expect(rotated.open(before)).toBe('whsec_1');
    expect(rotated.seal('whsec_2').startsWith('v2.k2.')).toBe(true);
    expect(() => createSealedBox(ring('k2', fresh)).open(before)).toThrow(/no longer configured/);
  });

  it('bearer tokens carry their key id; a token of a key no longer configured is invalid', async () => {
    const clock = () => new Date();
    const claims = { clientId: 'cli_1', partnerId: 'ptn_1', environment: 'sandbox' as const };
    const first = createTokenService({ keys: ring('k1', old), issuer: 'i', clock });
    const { accessToken } = await first.issue(claims);
    expect(
      JSON.parse(Buffer.from(accessToken.split('.')[0]!, 'base64url').toString()),
    ).toMatchObject({
      kid: 'k1',
    });
    const both = keyRing([
      { id: 'k2', secret: Buffer.from(fresh) },
      { id: 'k1', secret: Buffer.from(old) },
    ]);
    await expect(
      createTokenService({ keys: both, issuer: 'i', clock }).verify(accessToken),
    ).resolves.toEqual(claims);
    await expect(
      createTokenService({ keys: ring('k2', fresh), issuer: 'i', clock }).verify(accessToken),
    ).rejects.toBeInstanceOf(TokenError);
  });
});
