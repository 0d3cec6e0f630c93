import { normalizeCnpj } from './domain/customers/tax-ids.js';
import type { Institution } from './domain/regulatory/scr3040.js';
import { scrInstitutionOf, scrRules, scrSettings } from './regulatory/config.js';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import ms, { type StringValue } from 'ms';
import { z } from 'zod';
import { defaultSimulationThreads } from './domain/credit/simulation-pool.js';
import type { IofRates } from './domain/credit/simulation.js';
import type { LateChargeRates } from './domain/loans/repayment.js';
import { MIN_KEY_BYTES, parseKeyRing, type KeyRing } from './domain/key-ring.js';
import { predictability } from './domain/secret-strength.js';
import { parseProxyRanges, type PspAuthentication } from './domain/pix/psp-mtls.js';
import { projectRoot } from './project-root.js';
import type { PayloadEncryption } from './temporal/payload-codec.js';
import { parseTemporalSecurity, type TemporalTls } from './temporal/connection-security.js';
import { parseTracingConfig, type TracingConfig } from './observability/tracing-config.js';

/** The OPS_TOKEN used when none is configured in development and tests. Printed by `npm run dev`. */
export const DEVELOPMENT_OPS_TOKEN = 'dev-ops-token-not-for-production';
/** The PSP_WEBHOOK_SECRET of development and tests (the sandbox, the walkthrough, the benches). */
export const DEVELOPMENT_PSP_WEBHOOK_SECRET = 'dev-psp-webhook-secret-not-for-production';
/** `npm run dev`'s OAuth2 client at its PSP simulator (PSP_CLIENT_ID, PSP_CLIENT_SECRET). */
export const DEVELOPMENT_PSP_CLIENT = {
  id: 'embedded-credit',
  secret: 'dev-psp-client-secret-not-for-production',
} as const;
/**
 * The Pix key of sandbox charges: a random key (EVP) no bank holds, so a sandbox BR Code can never
 * take real money; the sandbox pays its charges with `POST /v3/sandbox/charges/{id}/pay`.
 */
export const SANDBOX_PIX_KEY = '7d9f0c3e-5b1a-4c8e-9f2d-000000000000';
/** The creditor development and tests name in contracts: fictitious, refused anywhere else. */
export const SANDBOX_LENDER = {
  LENDER_NAME: 'Embedded Credit SCD S.A.',
  LENDER_CNPJ: '11222333000181',
} as const;
/**
 * Development and tests only: fixed so tokens, links and stored replays survive a restart of
 * `npm run dev`. Published here, so anywhere else they are refused (see `failClosedRules`).
 */
const DEVELOPMENT_KEYS = {
  TOKEN_SIGNING_KEYS: 'dev:development-token-signing-key-not-for-production',
  DATA_ENCRYPTION_KEYS: 'dev:development-data-encryption-key-not-for-production',
  SIGNING_LINK_KEYS: 'dev:development-signing-link-key-not-for-production',
  TEMPORAL_PAYLOAD_KEYS: 'dev:development-temporal-payload-key-not-for-production',
  APPROVAL_DECISION_KEYS: 'dev:development-approval-decision-key-not-for-production',
  CONSOLE_SESSION_KEYS: 'dev:development-console-session-key-not-for-production',
} as const;
type KeyPurpose = keyof typeof DEVELOPMENT_KEYS;
const keyPurposes = Object.keys(DEVELOPMENT_KEYS) as KeyPurpose[];
/** Every secret this source publishes: none of them may protect a real deployment. */
const PUBLISHED_SECRETS = new Set<string>([
  DEVELOPMENT_OPS_TOKEN,
  DEVELOPMENT_PSP_WEBHOOK_SECRET,
  DEVELOPMENT_PSP_CLIENT.secret,
  ...Object.values(DEVELOPMENT_KEYS).map((ring) => ring.slice(ring.indexOf(':') + 1)),
]);
/** Names of earlier versions, refused with the new name rather than silently ignored. */
const RENAMED = {
  TOKEN_SIGNING_KEY: 'TOKEN_SIGNING_KEYS',
  DATA_ENCRYPTION_KEY: 'DATA_ENCRYPTION_KEYS',
} as const;

const duration = (fallback: StringValue) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const parsed = ms(value as StringValue);
      if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed < 0) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a duration such as 10s, 5m or 1d, got "${value}"`,
        });
        return z.NEVER;
      }
      return parsed;
    });

const headerName = (fallback: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9-]{1,100}$/, 'expected an HTTP header name')
    .default(fallback);

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/** A rate as a decimal string (`0.0038` = 0.38 %), kept as text so no binary float holds it. */
const rate = (fallback: string, cap?: { max: string; why: string }) => {
  const decimal = z
    .string()
    .default(fallback)
    .refine((value) => /^(0(\.\d{1,12})?|1(\.0{1,12})?)$/.test(value), {
      message: 'expected a decimal rate between 0 and 1, such as 0.0038',
      abort: true,
    });
  if (!cap) return decimal;
  return decimal.refine((value) => new Decimal(value).lte(cap.max), {
    message: `at most ${cap.max}: ${cap.why}`,
  });
};

const keyRingVariable = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined) return undefined;
    const { ring, problems } = parseKeyRing(value);
    for (const message of problems) ctx.addIssue({ code: 'custom', message });
    return ring ?? z.NEVER;
  });

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((value) => value === 'true' || value === '1');

const schema = z.object({
  // Unset means production: the development defaults are for commands that ask for them.
  NODE_ENV: z.enum(['development', 'test', 'production']).default('production'),
  PORT: port(3000),
  // The API's address: loopback unless the deployment says otherwise (a container says 0.0.0.0).
  HOST: z.string().min(1).default('127.0.0.1'),
  // The ops API's own listener (contract §15); unset: the ops API shares PORT.
  OPS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  // How long money moved by hand waits for a second operator's approval (contract §15).
  APPROVAL_TTL: duration('24h'),
  // Erasure (contract §15): what the law keeps after a customer's last loan ends, and for how
  // long a denied applicant's documents stay.
  RETENTION_AFTER_LOAN_END: duration('5y'),
  DENIED_DOCUMENT_RETENTION: duration('90d'),
  PUBLIC_BASE_URL: z.url().optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('embedded-credit'),
  TEMPORAL_UI_PORT: port(8233),
  TEMPORAL_DEV_PORT: port(7233),
  // Workflow payloads (contract §15): encrypted by the codec of src/temporal/payload-codec.ts.
  TEMPORAL_PAYLOAD_KEYS: keyRingVariable,
  TEMPORAL_PAYLOAD_ENCRYPTION: z.enum(['on', 'decode-only']).default('on'),
  // The Temporal UI whose fetches the codec endpoint answers (CORS, credentials).
  TEMPORAL_UI_ORIGIN: z
    .string()
    .default('http://localhost:8233')
    .transform((value, ctx) => {
      const url = URL.canParse(value) ? new URL(value) : undefined;
      if (!url || !/^https?:$/.test(url.protocol) || url.origin !== value.replace(/\/$/, '')) {
        ctx.addIssue({ code: 'custom', message: 'expected an origin, scheme://host[:port]' });
        return z.NEVER;
      }
      return url.origin;
    }),
  EMBEDDED_POSTGRES_PORT: port(5433),
  OPS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  SANDBOX_REVIEW_DELAY: duration('10s'),
  SANDBOX_DISBURSEMENT_DELAY: duration('30s'),
  OFFER_RENEWAL_DELAY: duration('1d'),
  OFFER_VALIDITY: duration('30d'),
  LOAN_SIGNATURE_DEADLINE: duration('7d'),
  // The creditor named in every contract (CCB). The defaults, the sandbox's fictitious lender, are
  // for development and tests only (lenderRules).
  LENDER_NAME: z.string().min(1).max(200).default(SANDBOX_LENDER.LENDER_NAME),
  LENDER_CNPJ: z
    .string()
    .regex(/^\d{14}$/, 'expected 14 digits')
    .refine((value) => normalizeCnpj(value) === value, 'check digits do not match')
    .default(SANDBOX_LENDER.LENDER_CNPJ),
  // Where borrowers' Pix go (contract §14): the lender's key and city in every production BR Code
  // (the name is LENDER_NAME). The sandbox's charges name SANDBOX_PIX_KEY instead.
  LENDER_PIX_KEY: z.string().min(1).max(77).optional(),
  LENDER_PIX_CITY: z.string().min(1).max(60).default('SAO PAULO'),
  // The PSP's notifications of Pix received (`POST /psp/v1/pix`): signed with this secret, or, set
  // PSP_WEBHOOK_AUTH=mtls, authenticated by mutual TLS at the proxy in front.
  PSP_WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  PSP_WEBHOOK_AUTH: z.enum(['signature', 'mtls']).default('signature'),
  // The lender's PSP (contract §16): Banco Central's API Pix and the payout port at PSP_API_URL,
  // OAuth2 client credentials over mutual TLS (PEM files). Required outside development.
  PSP_API_URL: z.url({ protocol: /^https$/, error: 'expected an https URL' }).optional(),
  PSP_CLIENT_ID: z.string().min(1).optional(),
  PSP_CLIENT_SECRET: z.string().min(1).optional(),
  PSP_TLS_CERT: z.string().min(1).optional(),
  PSP_TLS_KEY: z.string().min(1).optional(),
  PSP_TLS_CA: z.string().min(1).optional(),
  // Money due back on a production loan leaves by devolução at the PSP this long after it became
  // due, unless ops returned it first (contract §16).
  REFUND_AFTER: duration('1d'),
  // Contract §17: a loan with a row overdue more than this many days is written off.
  WRITE_OFF_AFTER_DAYS: z.coerce.number().int().min(1).max(3650).default(360),
  // Contract §19: the SCR 3040's institution and responsible (src/regulatory/config.ts).
  ...scrSettings,
  // Contract §17: a payment agreement with a row overdue more than this many days is broken.
  AGREEMENT_BREAK_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  // A production loan's payout (contract §16): when no notification of its outcome came, the loan's
  // workflow asks the PSP after this, then at twice the wait each time, up to an hour apart.
  PAYOUT_POLL_INTERVAL: duration('2m'),
  // PSP_WEBHOOK_AUTH=mtls: the proxy that verifies the PSP's client certificate (its addresses), the
  // certificate's subject, and the headers the proxy writes (src/domain/pix/psp-mtls.ts).
  PSP_MTLS_TRUSTED_PROXIES: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const { ranges, invalid } = parseProxyRanges(value);
      for (const entry of invalid)
        ctx.addIssue({ code: 'custom', message: `"${entry}" is not an address or CIDR range` });
      if (ranges.length === 0 && invalid.length === 0)
        ctx.addIssue({
          code: 'custom',
          message: 'expected addresses or CIDR ranges, e.g. 10.0.0.5',
        });
      return invalid.length > 0
        ? z.NEVER
        : value
            .split(',')
            .map((entry) => entry.trim())
            .filter(Boolean);
    }),
  PSP_MTLS_SUBJECT: z.string().trim().min(1).max(1000).optional(),
  PSP_MTLS_VERIFY_HEADER: headerName('X-SSL-Client-Verify'),
  PSP_MTLS_SUBJECT_HEADER: headerName('X-SSL-Client-S-DN'),
  // IOF (Decreto 6.306/2007 as amended): rates change by decree, so they live in configuration.
  IOF_FLAT_RATE: rate('0.0038'),
  IOF_DAILY_RATE_INDIVIDUAL: rate('0.000082'),
  IOF_DAILY_RATE_COMPANY: rate('0.000082'),
  IOF_DAILY_RATE_MEI: rate('0.0000274'),
  IOF_MEI_PRINCIPAL_LIMIT: z.coerce.number().int().min(0).default(3_000_000),
  // Late charges (contract §12), fixed in each loan when it is created, within the legal caps of
  // contract §13: a larger value stops the process with the reason.
  LATE_FEE_RATE: rate('0.02', {
    max: '0.02',
    why: 'CDC art. 52 §1 caps the late fee at 2 % of the installment',
  }),
  LATE_INTEREST_MONTHLY_RATE: rate('0.01', {
    max: '0.01',
    why: 'late interest (juros de mora) is capped at 1 % a month',
  }),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag,
  // Plain http to this machine's loopback (a partner's receiver under `npm run dev`).
  WEBHOOK_ALLOW_LOOPBACK_HTTP: flag,
  OUTBOX_SWEEP_INTERVAL: duration('5s'),
  TOKEN_SIGNING_KEYS: keyRingVariable,
  DATA_ENCRYPTION_KEYS: keyRingVariable,
  SIGNING_LINK_KEYS: keyRingVariable,
  // The API's proof of each approval decision, verified by the worker (issue 37).
  APPROVAL_DECISION_KEYS: keyRingVariable,
  // The back office's session cookies and CSRF tokens (issue 40).
  CONSOLE_SESSION_KEYS: keyRingVariable,
  TRUSTED_PROXY_COUNT: z.coerce.number().int().min(0).max(10).default(0),
  MAX_CREDENTIALS_PER_PARTNER: z.coerce.number().int().min(2).max(1000).default(10),
  WEBHOOK_ALLOWED_PORTS: z
    .string()
    .default('443,8443')
    .transform((value, ctx) => {
      const ports = value.split(',').map((part) => Number(part.trim()));
      if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
        ctx.addIssue({
          code: 'custom',
          message: 'expected ports separated by commas, e.g. 443,8443',
        });
        return z.NEVER;
      }
      return [...new Set(ports)];
    }),
  SMTP_URL: z
    .url({ protocol: /^smtps?$/, error: 'expected an smtp:// or smtps:// URL' })
    .optional(),
  MAIL_FROM: z.string().min(3).max(200).default('Embedded Credit <nao-responda@localhost>'),
  RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
  TOKEN_FAILURE_LIMIT: z.coerce.number().int().min(1).default(10),
  TOKEN_FAILURE_WINDOW: duration('5m'),
  CREDENTIAL_CACHE_MAX_AGE: duration('5s'),
  REQUEST_TIMEOUT: duration('15s'),
  // Threads for long simulations' math (src/domain/credit/simulation-pool.ts); 0: on the event loop.
  SIMULATION_THREADS: z.coerce.number().int().min(0).max(64).default(defaultSimulationThreads()),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(1).default(100),
  // The daily reconciliation's schedule (contract §16): HH:MM in São Paulo, or `off`.
  RECONCILIATION_TIME: z
    .string()
    .default('00:30')
    .transform((value, ctx) => {
      if (value === 'off') return null;
      const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value);
      if (!match) {
        ctx.addIssue({ code: 'custom', message: 'HH:MM (São Paulo time, 00:00–23:59) or off' });
        return z.NEVER;
      }
      return { hour: Number(match[1]), minute: Number(match[2]) };
    }),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  FILE_STORE: z.enum(['s3', 'local']).default('s3'),
  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z.string().min(3).max(63).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  UPLOADS_DIR: z.string().min(1).optional(),
  WEBHOOK_CA_FILE: z.string().min(1).optional(),
  WORKFLOW_BUNDLE: z.string().min(1).optional(),
});

export interface Config {
  readonly nodeEnv: 'development' | 'test' | 'production';
  /** OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT …): undefined, off. */
  readonly tracing: TracingConfig | undefined;
  readonly port: number;
  /** The API's listening address (HOST). */
  readonly host: string;
  /** OPS_PORT: the ops API (and /metrics) only there; undefined: on PORT with the rest. */
  readonly opsPort: number | undefined;
  readonly publicBaseUrl: string;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  readonly temporal: {
    readonly address: string;
    readonly namespace: string;
    readonly taskQueue: string;
    readonly uiPort: number;
    readonly devPort: number;
    /** The Temporal UI's origin, the one allowed to call the codec endpoint. */
    readonly uiOrigin: string;
    /** TEMPORAL_PAYLOAD_KEYS: the codec's keys (src/temporal/payload-codec.ts). */
    readonly payloadKeys: KeyRing;
    /** `decode-only` while upgrading a deployment that ran without the codec (README). */
    readonly payloadEncryption: PayloadEncryption;
    /** TLS (false: plaintext) and API key of every connection to Temporal. */
    readonly tls: TemporalTls;
    readonly apiKey: string | undefined;
  };
  readonly embeddedPostgresPort: number;
  readonly opsToken: string;
  readonly logLevel: string;
  readonly sandboxReviewDelayMs: number;
  readonly sandboxDisbursementDelayMs: number;
  readonly offerRenewalDelayMs: number;
  readonly offerValidityMs: number;
  readonly loanSignatureDeadlineMs: number;
  /** The creditor named in every contract. */
  readonly lender: { readonly name: string; readonly cnpj: string };
  /** What production BR Codes name (the lender's key and city); the sandbox's key is fixed. */
  readonly pix: { readonly key: string; readonly city: string };
  /**
   * The lender's PSP (src/psp/client.ts): where, who we are, and the PEM files of our client
   * certificate, its key and the CA the PSP's certificate chains to. Null in development and tests
   * when PSP_API_URL is unset (production requires it).
   */
  readonly psp: PspSettings | null;
  /** PAYOUT_POLL_INTERVAL: the first wait before a payout's outcome is asked of the PSP. */
  readonly payoutPollIntervalMs: number;
  /** How `POST /psp/v1/pix` is authenticated: the signature's secret, or mTLS in front (null). */
  readonly pspWebhookSecret: string | null;
  /** The same, as the PSP guard takes it: the secret, or the mTLS proxy's settings. */
  readonly pspAuthentication: PspAuthentication;
  /** IOF rates as decimal strings, and the principal (centavos) up to which the MEI rate applies. */
  readonly iof: IofRates;
  /** LATE_FEE_RATE and LATE_INTEREST_MONTHLY_RATE as decimal strings. */
  readonly lateCharges: LateChargeRates;
  readonly webhookAllowPrivateTargets: boolean;
  /** WEBHOOK_ALLOW_LOOPBACK_HTTP: `http://localhost…`, `http://127.…`, `http://[::1]…` targets. */
  readonly webhookAllowLoopbackHttp: boolean;
  readonly outboxSweepIntervalMs: number;
  /** Workflows a worker keeps in memory between their tasks. */
  readonly workerMaxCachedWorkflows: number;
  /** When the daily reconciliation runs (São Paulo), or null: no schedule (RECONCILIATION_TIME). */
  readonly reconciliationTime: { hour: number; minute: number } | null;
  /** The worker's `/metrics` (0: none), on WORKER_METRICS_HOST (loopback by default). */
  readonly workerMetricsPort: number;
  readonly workerMetricsHost: string;
  /** One key ring per purpose, never a key shared between two (see key-ring.ts). */
  readonly keys: {
    /** HS256 keys of the partner bearer tokens (`kid` in the JWT header). */
    readonly tokenSigning: KeyRing;
    /** Keys of data sealed at rest (webhook secrets, stored idempotent responses). */
    readonly dataEncryption: KeyRing;
    /** Keys of the hosted signing links (`signing_url`). */
    readonly signingLink: KeyRing;
    /**
     * HMAC keys of the API's proof of each approval decision (src/domain/approvals/
     * decision-proof.ts): the API and the worker hold them, Temporal never sees them.
     */
    readonly approvalDecision: KeyRing;
    /** Keys of the back office's session cookies and CSRF tokens (console/session.ts). */
    readonly consoleSession: KeyRing;
  };
  /** Proxies in front of the API whose `X-Forwarded-For` entries are trusted (0: none). */
  readonly trustedProxyCount: number;
  /** Live credentials a partner may hold, both environments together. */
  readonly maxCredentialsPerPartner: number;
  /** Ports a webhook URL may name (ignored with WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  readonly webhookAllowedPorts: readonly number[];
  /** Outgoing mail (signing codes): the SMTP server, none in development until one is set. */
  readonly mail: { readonly smtpUrl: string | undefined; readonly from: string };
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  /** A request's budget: past it, 503 with Retry-After (see request-budget.ts). */
  readonly requestTimeoutMs: number;
  /** APPROVAL_TTL: a pending approval expires this long after it was asked for. */
  readonly approvalTtlMs: number;
  /** REFUND_AFTER: when money due back on a production loan leaves by devolução on its own. */
  readonly refundAfterMs: number;
  /** WRITE_OFF_AFTER_DAYS: a row overdue longer writes its loan off (contract §17). */
  readonly writeOffAfterDays: number;
  /** SCR_*: the 3040's institution and responsible (contract §19); null: unset (development). */
  readonly scr: Institution | null;
  /** AGREEMENT_BREAK_DAYS: an agreement row overdue longer breaks its agreement (contract §17). */
  readonly agreementBreakDays: number;
  /**
   * RETENTION_AFTER_LOAN_END: an erased customer's contracts and ledger are kept this long after
   * the last loan ends; DENIED_DOCUMENT_RETENTION: a denied applicant's documents, after the denial.
   */
  readonly retention: { readonly afterLoanEndMs: number; readonly deniedDocumentsMs: number };
  /** Worker threads for simulations of more than 48 installments (0: on the event loop). */
  readonly simulationThreads: number;
  /** The longest a credential is served from memory (0: read on every request); see credential-cache.ts. */
  readonly credentialCacheMaxAgeMs: number;
  /** Failed token exchanges allowed per (client_id, address) pair within the window. */
  readonly tokenFailures: { readonly limit: number; readonly windowMs: number };
  /**
   * Where KYC documents and contract PDFs live: an S3-compatible bucket (`FILE_STORE=s3`, the
   * default), or a local folder when chosen explicitly (`FILE_STORE=local`, `UPLOADS_DIR`).
   */
  readonly fileStore:
    | {
        readonly kind: 's3';
        readonly endpoint: string | undefined;
        readonly bucket: string;
        readonly region: string;
        /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; otherwise the SDK's default chain. */
        readonly credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
      }
    | { readonly kind: 'local'; readonly dir: string };
  /** A PEM file of extra CAs trusted for webhook deliveries (receivers on a private PKI). */
  readonly webhookCaFile: string | undefined;
  /** A workflow bundle the worker loads instead of bundling the sources (the test run's). */
  readonly workflowBundle: string | undefined;
}

export interface PspSettings {
  readonly apiUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly tls: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
}

const PSP_SETTINGS = [
  'PSP_API_URL',
  'PSP_CLIENT_ID',
  'PSP_CLIENT_SECRET',
  'PSP_TLS_CERT',
  'PSP_TLS_KEY',
  'PSP_TLS_CA',
] as const;

/** Rules across variables, checked on the raw environment so they are reported with the rest. */
function crossRules(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  if ((env.FILE_STORE ?? 's3') === 's3' && !env.S3_BUCKET)
    problems.push(
      'S3_BUCKET: required with FILE_STORE=s3 (the default); FILE_STORE=local keeps files in UPLOADS_DIR',
    );
  if (env.PSP_WEBHOOK_AUTH === 'mtls' && !env.PSP_MTLS_SUBJECT?.trim())
    problems.push(
      "PSP_MTLS_SUBJECT: required with PSP_WEBHOOK_AUTH=mtls: the subject (DN) of the PSP's client certificate, as the proxy passes it; without it nothing would be checked",
    );
  if (env.OPS_PORT !== undefined && Number(env.OPS_PORT) === Number(env.PORT ?? 3000))
    problems.push(
      'OPS_PORT: the same port as PORT; the ops listener needs one of its own (unset, the ops API shares PORT)',
    );
  // The PSP's settings come together: half of them would fail at the first call instead of now.
  const pspSet = PSP_SETTINGS.filter((name) => env[name]);
  if (pspSet.length > 0)
    for (const name of PSP_SETTINGS)
      if (!env[name])
        problems.push(`${name}: required with ${pspSet[0]} (the PSP's settings go together)`);
  for (const [old, renamed] of Object.entries(RENAMED)) {
    if (env[old] !== undefined)
      problems.push(`${old}: renamed to ${renamed}, a list of id:secret (see README)`);
  }
  return problems;
}

const isDevelopment = (env: NodeJS.ProcessEnv) =>
  env.NODE_ENV === 'development' || env.NODE_ENV === 'test';

/**
 * Outside development and tests the service refuses to start on anything a reader of this source
 * could know or guess (contract §15, "Fail closed"): a missing or published key or token, one
 * shorter than 32 bytes, one secret serving two purposes, links that are not https.
 */
function failClosedRules(env: NodeJS.ProcessEnv): string[] {
  if (isDevelopment(env)) return [];
  const problems: string[] = [];
  const secrets: { name: string; secret: string }[] = [];
  for (const name of ['OPS_TOKEN', ...keyPurposes, 'SMTP_URL', 'MAIL_FROM']) {
    if (!env[name]) problems.push(`${name}: required outside development`);
  }
  if (!env.LENDER_PIX_KEY) problems.push('LENDER_PIX_KEY: required outside development');
  problems.push(...lenderRules(env));
  problems.push(...scrRules(env));
  if (!PSP_SETTINGS.some((name) => env[name]))
    problems.push(
      `${PSP_SETTINGS.join(', ')}: required outside development (the lender's PSP moves production money, contract §16; the PSP simulator is for development only)`,
    );
  if (env.PSP_CLIENT_SECRET && PUBLISHED_SECRETS.has(env.PSP_CLIENT_SECRET))
    problems.push('PSP_CLIENT_SECRET: is a development default published in the source');
  if (env.PSP_WEBHOOK_AUTH === 'mtls') {
    if (env.PSP_WEBHOOK_SECRET)
      problems.push('PSP_WEBHOOK_SECRET: set, but PSP_WEBHOOK_AUTH=mtls ignores it; choose one');
    if (!env.PSP_MTLS_TRUSTED_PROXIES)
      problems.push(
        "PSP_MTLS_TRUSTED_PROXIES: required outside development with PSP_WEBHOOK_AUTH=mtls: the addresses of the proxy that verifies the PSP's certificate (its headers are believed from them only)",
      );
  } else if (!env.PSP_WEBHOOK_SECRET)
    problems.push(
      'PSP_WEBHOOK_SECRET: required outside development (or PSP_WEBHOOK_AUTH=mtls, with mutual TLS in front)',
    );
  else {
    if (Buffer.byteLength(env.PSP_WEBHOOK_SECRET) < MIN_KEY_BYTES)
      problems.push(
        `PSP_WEBHOOK_SECRET: must be at least ${MIN_KEY_BYTES} bytes outside development`,
      );
    secrets.push({ name: 'PSP_WEBHOOK_SECRET', secret: env.PSP_WEBHOOK_SECRET });
  }
  if (env.OPS_TOKEN) {
    if (Buffer.byteLength(env.OPS_TOKEN) < MIN_KEY_BYTES)
      problems.push(`OPS_TOKEN: must be at least ${MIN_KEY_BYTES} bytes outside development`);
    secrets.push({ name: 'OPS_TOKEN', secret: env.OPS_TOKEN });
  }
  for (const name of keyPurposes) {
    for (const key of parseKeyRing(env[name] ?? '').ring?.all ?? [])
      secrets.push({ name: `${name} (${key.id})`, secret: key.secret.toString('utf8') });
  }
  for (const { name, secret } of secrets) {
    if (PUBLISHED_SECRETS.has(secret))
      problems.push(`${name}: is a development default published in the source`);
    else {
      const why = predictability(secret);
      if (why)
        problems.push(
          `${name}: too predictable to protect a deployment (${why}); generate one, e.g. openssl rand -hex 32`,
        );
    }
  }
  for (const [index, { name, secret }] of secrets.entries()) {
    const twin = secrets.slice(0, index).find((earlier) => earlier.secret === secret);
    if (twin && !PUBLISHED_SECRETS.has(secret))
      problems.push(`${name}: the same secret as ${twin.name}; each purpose needs its own`);
  }
  const base = env.PUBLIC_BASE_URL;
  if (!base)
    problems.push(
      'PUBLIC_BASE_URL: required outside development (the https address partners and borrowers reach: signing links, e-mails, token issuer); unset, links would name http://localhost',
    );
  if (base && URL.canParse(base)) {
    const url = new URL(base);
    if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname))
      problems.push('PUBLIC_BASE_URL: must be https outside development (loopback aside)');
  }
  const uiOrigin = env.TEMPORAL_UI_ORIGIN;
  if (uiOrigin && URL.canParse(uiOrigin)) {
    const url = new URL(uiOrigin);
    if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname))
      problems.push(
        'TEMPORAL_UI_ORIGIN: must be https outside development (loopback aside): its pages get decoded payloads',
      );
  }
  if (env.TEMPORAL_PAYLOAD_ENCRYPTION === 'decode-only')
    problems.push(
      'TEMPORAL_PAYLOAD_ENCRYPTION: decode-only writes workflow payloads in clear and takes unencrypted ones (an Update forged at the Temporal frontend would be obeyed): for rehearsing an upgrade outside production only',
    );
  problems.push(...smtpRules(env.SMTP_URL));
  for (const name of ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'WEBHOOK_ALLOW_LOOPBACK_HTTP'] as const)
    if (['true', '1'].includes(env[name] ?? ''))
      problems.push(`${name}: is for local development only and cannot be set outside it`);
  return problems;
}

/**
 * Every contract names its creditor: outside development the lender is said, never assumed, so a
 * deployment cannot sign contracts in the name of the sandbox's fictitious lender.
 */
function lenderRules(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const name of ['LENDER_NAME', 'LENDER_CNPJ'] as const) {
    if (!env[name]?.trim())
      problems.push(
        `${name}: required outside development (the creditor every contract names; unset, contracts would name the sandbox's fictitious lender)`,
      );
    else if (env[name] === SANDBOX_LENDER[name])
      problems.push(
        `${name}: is the sandbox's fictitious lender; set the lender's own for contracts outside development`,
      );
  }
  return problems;
}

const isLoopbackHost = (host: string) =>
  host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]';

/**
 * Mail carries signing codes and names borrowers: outside development it travels encrypted to a
 * relay whose certificate is checked (a relay on this machine's loopback aside). `smtp://` alone
 * upgrades with STARTTLS only when the server offers it — an attacker in the path removes the offer
 * — so it must say `requireTLS=true`.
 */
function smtpRules(smtpUrl: string | undefined): string[] {
  if (!smtpUrl || !URL.canParse(smtpUrl)) return [];
  const url = new URL(smtpUrl);
  if (isLoopbackHost(url.hostname)) return [];
  const problems: string[] = [];
  if (url.protocol === 'smtp:' && url.searchParams.get('requireTLS') !== 'true')
    problems.push(
      'SMTP_URL: plaintext outside development (smtp:// falls back to clear when STARTTLS is not offered): use smtps://, or smtp://…?requireTLS=true',
    );
  if (url.searchParams.get('tls.rejectUnauthorized') === 'false')
    problems.push(
      "SMTP_URL: tls.rejectUnauthorized=false takes any certificate; outside development the relay's is checked",
    );
  return problems;
}

/** In development and tests a purpose with no keys configured gets its published default. */
export function developmentRing(purpose: KeyPurpose): KeyRing {
  const ring = parseKeyRing(DEVELOPMENT_KEYS[purpose]).ring;
  if (!ring) throw new Error(`the development ${purpose} do not parse`);
  return ring;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; every problem is reported together, not just the first. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  const temporalSecurity = parseTemporalSecurity(env, !isDevelopment(env));
  const tracing = parseTracingConfig(env);
  const problems = [
    ...(parsed.error?.issues ?? []).map(
      (issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`,
    ),
    ...crossRules(env),
    ...failClosedRules(env),
    ...temporalSecurity.problems,
    ...tracing.problems,
  ];
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const e = parsed.data;
  return Object.freeze({
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    opsPort: e.OPS_PORT,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    temporal: Object.freeze({
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiPort: e.TEMPORAL_UI_PORT,
      devPort: e.TEMPORAL_DEV_PORT,
      uiOrigin: e.TEMPORAL_UI_ORIGIN,
      payloadKeys: e.TEMPORAL_PAYLOAD_KEYS ?? developmentRing('TEMPORAL_PAYLOAD_KEYS'),
      payloadEncryption: e.TEMPORAL_PAYLOAD_ENCRYPTION,
      tls: temporalSecurity.tls,
      apiKey: temporalSecurity.apiKey,
    }),
    embeddedPostgresPort: e.EMBEDDED_POSTGRES_PORT,
    opsToken: e.OPS_TOKEN ?? DEVELOPMENT_OPS_TOKEN,
    logLevel: e.LOG_LEVEL,
    sandboxReviewDelayMs: e.SANDBOX_REVIEW_DELAY,
    sandboxDisbursementDelayMs: e.SANDBOX_DISBURSEMENT_DELAY,
    offerRenewalDelayMs: e.OFFER_RENEWAL_DELAY,
    offerValidityMs: e.OFFER_VALIDITY,
    loanSignatureDeadlineMs: e.LOAN_SIGNATURE_DEADLINE,
    payoutPollIntervalMs: e.PAYOUT_POLL_INTERVAL,
    lender: Object.freeze({ name: e.LENDER_NAME, cnpj: e.LENDER_CNPJ }),
    // Development only (production requires LENDER_PIX_KEY): the sandbox's key, never a real one.
    pix: Object.freeze({ key: e.LENDER_PIX_KEY ?? SANDBOX_PIX_KEY, city: e.LENDER_PIX_CITY }),
    pspWebhookSecret:
      e.PSP_WEBHOOK_AUTH === 'mtls'
        ? null
        : (e.PSP_WEBHOOK_SECRET ?? DEVELOPMENT_PSP_WEBHOOK_SECRET),
    psp:
      e.PSP_API_URL &&
      e.PSP_CLIENT_ID &&
      e.PSP_CLIENT_SECRET &&
      e.PSP_TLS_CERT &&
      e.PSP_TLS_KEY &&
      e.PSP_TLS_CA
        ? Object.freeze({
            apiUrl: e.PSP_API_URL.replace(/\/+$/, ''),
            clientId: e.PSP_CLIENT_ID,
            clientSecret: e.PSP_CLIENT_SECRET,
            tls: Object.freeze({
              certFile: e.PSP_TLS_CERT,
              keyFile: e.PSP_TLS_KEY,
              caFile: e.PSP_TLS_CA,
            }),
          })
        : null,
    pspAuthentication: Object.freeze(
      e.PSP_WEBHOOK_AUTH === 'mtls'
        ? {
            mtls: Object.freeze({
              // Development: a proxy on this machine (production names its own, or refuses).
              trustedProxies: Object.freeze(e.PSP_MTLS_TRUSTED_PROXIES ?? ['127.0.0.0/8', '::1']),
              subject: e.PSP_MTLS_SUBJECT ?? '',
              verifyHeader: e.PSP_MTLS_VERIFY_HEADER,
              subjectHeader: e.PSP_MTLS_SUBJECT_HEADER,
            }),
          }
        : { secret: e.PSP_WEBHOOK_SECRET ?? DEVELOPMENT_PSP_WEBHOOK_SECRET },
    ),
    iof: Object.freeze({
      flat: e.IOF_FLAT_RATE,
      dailyIndividual: e.IOF_DAILY_RATE_INDIVIDUAL,
      dailyCompany: e.IOF_DAILY_RATE_COMPANY,
      dailyMei: e.IOF_DAILY_RATE_MEI,
      meiPrincipalLimitAmount: e.IOF_MEI_PRINCIPAL_LIMIT,
    }),
    lateCharges: Object.freeze({
      feeRate: e.LATE_FEE_RATE,
      monthlyInterestRate: e.LATE_INTEREST_MONTHLY_RATE,
    }),
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    webhookAllowLoopbackHttp: e.WEBHOOK_ALLOW_LOOPBACK_HTTP,
    outboxSweepIntervalMs: e.OUTBOX_SWEEP_INTERVAL,
    workerMaxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    reconciliationTime: e.RECONCILIATION_TIME,
    workerMetricsPort: e.WORKER_METRICS_PORT,
    workerMetricsHost: e.WORKER_METRICS_HOST,
    fileStore: Object.freeze(
      e.FILE_STORE === 'local'
        ? { kind: 'local' as const, dir: e.UPLOADS_DIR ?? join(projectRoot, '.data', 'uploads') }
        : {
            kind: 's3' as const,
            endpoint: e.S3_ENDPOINT,
            bucket: e.S3_BUCKET ?? '',
            region: e.S3_REGION,
            credentials:
              e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
                ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY }
                : undefined,
          },
    ),
    webhookCaFile: e.WEBHOOK_CA_FILE,
    workflowBundle: e.WORKFLOW_BUNDLE,
    keys: Object.freeze({
      tokenSigning: e.TOKEN_SIGNING_KEYS ?? developmentRing('TOKEN_SIGNING_KEYS'),
      dataEncryption: e.DATA_ENCRYPTION_KEYS ?? developmentRing('DATA_ENCRYPTION_KEYS'),
      signingLink: e.SIGNING_LINK_KEYS ?? developmentRing('SIGNING_LINK_KEYS'),
      approvalDecision: e.APPROVAL_DECISION_KEYS ?? developmentRing('APPROVAL_DECISION_KEYS'),
      consoleSession: e.CONSOLE_SESSION_KEYS ?? developmentRing('CONSOLE_SESSION_KEYS'),
    }),
    trustedProxyCount: e.TRUSTED_PROXY_COUNT,
    maxCredentialsPerPartner: e.MAX_CREDENTIALS_PER_PARTNER,
    webhookAllowedPorts: Object.freeze(e.WEBHOOK_ALLOWED_PORTS),
    mail: Object.freeze({ smtpUrl: e.SMTP_URL, from: e.MAIL_FROM }),
    rateLimit: Object.freeze({ perSecond: e.RATE_LIMIT_PER_SECOND, burst: e.RATE_LIMIT_BURST }),
    credentialCacheMaxAgeMs: e.CREDENTIAL_CACHE_MAX_AGE,
    requestTimeoutMs: e.REQUEST_TIMEOUT,
    approvalTtlMs: e.APPROVAL_TTL,
    refundAfterMs: e.REFUND_AFTER,
    writeOffAfterDays: e.WRITE_OFF_AFTER_DAYS,
    scr: scrInstitutionOf(e),
    agreementBreakDays: e.AGREEMENT_BREAK_DAYS,
    retention: Object.freeze({
      afterLoanEndMs: e.RETENTION_AFTER_LOAN_END,
      deniedDocumentsMs: e.DENIED_DOCUMENT_RETENTION,
    }),
    simulationThreads: e.SIMULATION_THREADS,
    tokenFailures: Object.freeze({
      limit: e.TOKEN_FAILURE_LIMIT,
      windowMs: e.TOKEN_FAILURE_WINDOW,
    }),
    tracing: tracing.tracing,
  });
}

/** Who production BR Codes pay (contract §14): the lender's Pix key, name and city. */
export const pixPayee = (config: Pick<Config, 'pix' | 'lender'>) => ({
  key: config.pix.key,
  merchantName: config.lender.name,
  city: config.pix.city,
});
