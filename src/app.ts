import { collectionRoutes } from './http/routes/collections/router.js';
import { sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import Koa from 'koa';
import { createCredentialCache } from './auth/credential-cache.js';
import { createTokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { createSealedBox } from './domain/sealed-box.js';
import { TokenBuckets } from './domain/token-bucket.js';
import { SharedTokenBuckets, type TakeShared } from './limits/shared-token-buckets.js';
import { problems } from './errors.js';
import { ApiRouter, type DocumentedOperation } from './http/api-router.js';
import type { AppState } from './http/context.js';
import {
  breakGlassCounter,
  registerDatabaseUp,
  registerDisabledEndpointsGauge,
  registerLedgerGauge,
  registerOutboxGauge,
  registerUnmatchedPixGauge,
  registerReconciliationGauges,
  type HttpMetrics,
} from './http/metrics.js';
import { ledgerImbalance } from './db/queries/ledger.js';
import { takeTokens } from './db/queries/rate-limits.js';
import { unmatchedPixCount } from './db/queries/charges.js';
import { latestReconciliation } from './db/queries/reconciliation.js';
import { disabledEndpointCounts } from './db/queries/webhook-endpoints.js';
import {
  certificatesInUse,
  registerCertificateExpiry,
} from './observability/certificate-expiry.js';
import { oldestPendingStartSeconds } from './temporal/outbox.js';
import { idempotency } from './http/middleware/idempotency.js';
import { opsAuth } from './http/middleware/ops-auth.js';
import { pspAuth } from './http/middleware/psp-auth.js';
import { partnerAuth } from './http/middleware/partner-auth.js';
import { problemHandler } from './http/middleware/problem-handler.js';
import { rateLimit } from './http/middleware/rate-limit.js';
import { separateOpsListener } from './http/middleware/listeners.js';
import { opsAudit } from './http/middleware/ops-audit.js';
import { requestBudget } from './http/middleware/request-budget.js';
import { requestContext } from './http/middleware/request-context.js';
import { traceRequests } from './http/middleware/trace-requests.js';
import { activeTracing } from './observability/tracing.js';
import { securityHeaders } from './http/middleware/security-headers.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { partnerExamples, type RecordedExchange } from './http/examples/examples.js';
import { componentName, eventMeanings, webhookDeliveryText } from './http/routes/events/schema.js';
import { eventCatalogue } from './domain/webhooks/catalogue.js';
import { authRoutes } from './http/routes/auth/router.js';
import { docsRoutes } from './http/routes/docs/router.js';
import { temporalCodecRoutes } from './http/routes/temporal-codec/router.js';
import { codecSessions } from './http/routes/temporal-codec/session.js';
import { PayloadEncryptionCodec } from './temporal/payload-codec.js';
import { liveTokenIdOf, operatorOfLiveToken } from './db/queries/operator-sessions.js';
import { BREAK_GLASS_ID, breakGlass } from './domain/operators.js';
import { customerKeysIn } from './temporal/customer-keys.js';
import { healthRoutes } from './http/routes/health/router.js';
import { partnerRoutes } from './http/routes/partners/router.js';
import { operatorRoutes } from './http/routes/operators/router.js';
import { approvalRoutes } from './http/routes/approvals/router.js';
import { pspRoutes } from './http/routes/psp/router.js';
import { unmatchedPixRoutes } from './http/routes/psp/unmatched.js';
import { refundRoutes } from './http/routes/refunds/router.js';
import { smokeCheckRoutes } from './http/routes/smoke-checks/router.js';
import type { Logger } from './logger.js';
import { creditOfferRoutes } from './http/routes/credit-offers/router.js';
import { createSimulationPool } from './domain/credit/simulation-pool.js';
import { customerRoutes } from './http/routes/customers/router.js';
import { eventRoutes } from './http/routes/events/router.js';
import { hostedRoutes } from './http/routes/hosted/router.js';
import { consoleRoutes } from './http/routes/console/router.js';
import { consoleSessions } from './http/routes/console/session.js';
import { ledgerRoutes } from './http/routes/ledger/router.js';
import { reconciliationRoutes } from './http/routes/reconciliation/router.js';
import { regulatoryRoutes } from './http/routes/regulatory/router.js';
import { assignmentRoutes } from './http/routes/assignments/router.js';
import { payoutRoutes } from './http/routes/payouts/router.js';
import { chargeRoutes } from './http/routes/charges/router.js';
import { agreementRoutes } from './http/routes/agreements/router.js';
import { loanCommandRoutes } from './http/routes/loans/commands-router.js';
import { loanRoutes } from './http/routes/loans/router.js';
import { signingUrls } from './domain/loans/signing-token.js';
import { acceptanceUrls } from './domain/loans/acceptance-token.js';
import { reviewRoutes } from './http/routes/reviews/router.js';
import { erasureRoutes } from './http/routes/erasure/router.js';
import { creditDecisionRoutes } from './http/routes/reviews/credit-decision.js';
import { sandboxClockRoutes } from './http/routes/sandbox-clock/router.js';
import { webhookDeliveryRoutes } from './http/routes/webhooks/deliveries.js';
import { webhookEndpointRoutes } from './http/routes/webhooks/router.js';
import { createFileStore } from './storage/create-file-store.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import type { FileStore } from './storage/file-store.js';

export interface AppDeps {
  config: Config;
  database: Database;
  temporal: Client;
  logger: Logger;
  metrics: HttpMetrics;
  /** The time the API reasons with (token expiry, idempotency windows); tests move it. */
  clock?: () => Date;
  /** Where documents and contracts go; the configured store (`FILE_STORE`) by default. */
  files?: FileStore;
  /** Outgoing mail (signing codes); SMTP at `SMTP_URL` by default. */
  mailer?: Mailer;
  /** Sees each successful partner exchange: `npm run examples:record` keeps the reference's. */
  recordExchange?: (exchange: RecordedExchange) => void;
}

export interface App {
  koa: Koa<AppState>;
  /**
   * Stops what the app runs besides requests (the credential listener, the simulation threads);
   * the database stays open.
   */
  close: () => Promise<void>;
  /** The partner API's OpenAPI document (served at /v3/openapi.json). */
  partnerDocument: () => unknown;
  /** The partner API's operations, with the zod schemas that validate and document them. */
  partnerOperations: readonly DocumentedOperation[];
  /** The ops API's OpenAPI document (served at /ops/v1/openapi.json). */
  opsDocument: () => unknown;
  /** The PSP's API's OpenAPI document (served at /psp/v1/openapi.json, to ops). */
  pspDocument: () => unknown;
}

/**
 * Builds the Koa app without listening, so tests and the API process mount the same thing.
 * Routing comes before authentication: each route carries its own auth, so an unknown path is a
 * 404 and a known path with the wrong method a 405, with or without a token.
 */
export function createApp(deps: AppDeps): App {
  const { config, database, temporal, logger, metrics } = deps;
  const clock = deps.clock ?? (() => new Date());
  const db = database.db;

  const tokens = createTokenService({
    keys: config.keys.tokenSigning,
    issuer: config.publicBaseUrl,
    clock,
  });
  const credentials = createCredentialCache({
    db,
    databaseUrl: database.url,
    maxAgeMs: config.credentialCacheMaxAgeMs,
    logger,
  });
  const now = () => clock().getTime();
  // The limits every API process shares live in PostgreSQL, on its clock; a test's clock, when
  // given, is the time they go by instead.
  const sharedNow = deps.clock ? now : undefined;
  const takeShared: TakeShared = (params) => takeTokens(database.sql, params);
  const requestBuckets = new SharedTokenBuckets(
    takeShared,
    'request',
    config.rateLimit.perSecond,
    config.rateLimit.burst,
    sharedNow,
  );
  const { limit, windowMs } = config.tokenFailures;
  // `limit` failed exchanges per window for each (client_id, address) pair: a key of the client
  // id alone (public) or the address alone (shared by a NAT) would let anyone lock others out.
  const tokenFailures = new SharedTokenBuckets(
    takeShared,
    'token-failure',
    limit / (windowMs / 1000),
    limit,
    sharedNow,
  );
  const sealedBox = createSealedBox(config.keys.dataEncryption);
  const idempotencyGuard = idempotency({
    db,
    sealedBox,
    clock,
    publicBaseUrl: config.publicBaseUrl,
  });
  const breakGlassUses = breakGlassCounter(metrics);
  const audit = opsAudit({ db, clock, publicBaseUrl: config.publicBaseUrl });
  const guards = {
    partner: [partnerAuth({ credentials, tokens }), rateLimit(requestBuckets)],
    ops: [
      opsAuth({
        opsToken: config.opsToken,
        db,
        onBreakGlass: () => breakGlassUses.inc(),
      }),
    ],
    psp: [pspAuth(config.pspAuthentication, clock)],
    none: [],
  };

  const https = config.publicBaseUrl.startsWith('https:');
  const mailer =
    deps.mailer ?? createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger });
  const verificationDeps = {
    db,
    mailer,
    signingLinkKeys: config.keys.signingLink,
    clock,
  };

  const customerDeps = {
    db,
    temporal,
    logger,
    files: deps.files ?? createFileStore(config.fileStore),
    taskQueue: config.temporal.taskQueue,
    sandboxReviewDelayMs: config.sandboxReviewDelayMs,
    publicBaseUrl: config.publicBaseUrl,
    clock,
    dataKeys: config.keys.dataEncryption,
  };

  const loanDeps = {
    ...customerDeps,
    signingUrl: signingUrls(config.publicBaseUrl, config.keys.signingLink),
    signingLinkKeys: config.keys.signingLink,
    signatureDeadlineMs: config.loanSignatureDeadlineMs,
    sandboxDisbursementDelayMs: config.sandboxDisbursementDelayMs,
    agreements: {
      acceptanceUrl: acceptanceUrls(config.publicBaseUrl, config.keys.signingLink),
      breakDays: config.agreementBreakDays,
    },
    lender: config.lender,
    lateChargeRates: config.lateCharges,
    iof: config.iof,
    approvalTtlMs: config.approvalTtlMs,
    approvalDecisionKeys: config.keys.approvalDecision,
  };

  const partnerApi = new ApiRouter(
    '/v3',
    guards,
    idempotencyGuard.middleware,
    undefined,
    deps.recordExchange,
  );
  authRoutes(partnerApi, {
    db,
    tokens,
    credentials,
    tokenFailures,
    maxCredentialsPerPartner: config.maxCredentialsPerPartner,
    clock,
  });
  customerRoutes(partnerApi, customerDeps);
  const simulations = createSimulationPool({ threads: config.simulationThreads });
  creditOfferRoutes(partnerApi, { db, iof: config.iof, clock, simulations });
  loanRoutes(partnerApi, loanDeps);
  chargeRoutes(partnerApi, loanDeps);
  collectionRoutes(partnerApi, { db });
  agreementRoutes(partnerApi, loanDeps);
  eventRoutes(partnerApi, { db });
  webhookEndpointRoutes(partnerApi, {
    db,
    sealedBox,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    allowedPorts: config.webhookAllowedPorts,
    allowLoopbackHttp: config.webhookAllowLoopbackHttp,
    clock,
  });
  webhookDeliveryRoutes(partnerApi, { db, temporal, logger, taskQueue: config.temporal.taskQueue });
  reviewRoutes(partnerApi, customerDeps, 'sandbox');
  loanCommandRoutes(partnerApi, loanDeps, 'sandbox');
  sandboxClockRoutes(partnerApi, customerDeps);

  const codecSessionKeys = codecSessions(config.temporal.payloadKeys, clock);
  const opsApi = new ApiRouter('/ops/v1', guards, idempotencyGuard.middleware, audit);
  const staffDeps = {
    db,
    temporal,
    taskQueue: config.temporal.taskQueue,
    clock,
    logger,
    approvalTtlMs: config.approvalTtlMs,
    mailer,
  };
  operatorRoutes(opsApi, staffDeps);
  approvalRoutes(opsApi, loanDeps);
  partnerRoutes(opsApi, { db });
  reviewRoutes(opsApi, customerDeps, 'ops');
  const erasureDeps = {
    ...customerDeps,
    sealedBox,
    retentionAfterLoanEndMs: config.retention.afterLoanEndMs,
  };
  erasureRoutes(opsApi, erasureDeps);
  creditDecisionRoutes(opsApi, {
    ...customerDeps,
    offers: { validityMs: config.offerValidityMs, renewalDelayMs: config.offerRenewalDelayMs },
  });
  loanCommandRoutes(opsApi, loanDeps, 'ops');
  ledgerRoutes(opsApi, { db, clock });
  registerDatabaseUp(metrics, () => db.execute(sql`select 1`));
  payoutRoutes(opsApi, { db });
  registerLedgerGauge(metrics, () => ledgerImbalance(db));
  unmatchedPixRoutes(opsApi, loanDeps);
  refundRoutes(opsApi, { ...loanDeps, pspConfigured: config.psp !== null });
  registerUnmatchedPixGauge(metrics, () => unmatchedPixCount(db));
  registerOutboxGauge(metrics, () => oldestPendingStartSeconds(db));
  registerDisabledEndpointsGauge(metrics, () => disabledEndpointCounts(db));
  registerCertificateExpiry(metrics.registry, certificatesInUse(config));
  reconciliationRoutes(opsApi, {
    db,
    temporal,
    logger,
    clock,
    taskQueue: config.temporal.taskQueue,
  });
  registerReconciliationGauges(metrics, () => latestReconciliation(db));
  smokeCheckRoutes(opsApi, { db, temporal, logger, taskQueue: config.temporal.taskQueue });
  regulatoryRoutes(opsApi, { db, clock, institution: config.scr });
  assignmentRoutes(opsApi, staffDeps);

  const pspApi = new ApiRouter('/psp/v1', guards, idempotencyGuard.middleware);
  pspRoutes(pspApi, {
    db,
    temporal,
    logger,
    taskQueue: config.temporal.taskQueue,
    signingUrl: loanDeps.signingUrl,
  });

  const documents = lazyDocuments(config.publicBaseUrl, partnerApi, opsApi, pspApi);
  // Each router tries every request it gets (@koa/router reads the host, matches every route and
  // builds the matched chain), so the partners' comes first: their requests meet no other.
  // No two routers share a path.
  const routers = [
    partnerApi.router,
    opsApi.router,
    pspApi.router,
    // The break-glass token's reads of these are audited too (issue 37).
    healthRoutes({ database, temporal, metrics, opsGuard: [...guards.ops, audit('getMetrics')] }),
    docsRoutes({ ...documents, opsGuard: [...guards.ops, audit('getApiDocument')] }),
    // The Temporal UI's codec endpoint (Remote Codec protocol): staff see payloads decoded.
    temporalCodecRoutes({
      // Keys read fresh on each decode: an erasure shows here at once.
      codec: new PayloadEncryptionCodec(
        config.temporal.payloadKeys,
        config.temporal.payloadEncryption,
        customerKeysIn(db, config.temporal.payloadKeys, { maxAgeMs: 0 }),
      ),
      sessions: codecSessionKeys,
      uiOrigin: config.temporal.uiOrigin,
      opsGuard: guards.ops,
      audit,
      tokenIdOf: async (token, operator) =>
        operator.actor.id === BREAK_GLASS_ID
          ? codecSessionKeys.breakGlassTokenId(config.opsToken)
          : liveTokenIdOf(db, token),
      operatorOfSession: async (session) =>
        session.operatorId === BREAK_GLASS_ID
          ? session.tokenId === codecSessionKeys.breakGlassTokenId(config.opsToken)
            ? breakGlass
            : undefined
          : operatorOfLiveToken(db, session),
      https,
    }),
    // The back office (contract §18, issue 40): pages over the ops API's own commands, with the
    // roles and body schemas of its operations and its audit.
    consoleRoutes({
      db,
      sessions: consoleSessions(config.keys.consoleSession, clock),
      opsGuard: guards.ops,
      audit,
      operation: (operationId) => {
        const found = opsApi.operations.find((op) => op.spec.operationId === operationId);
        if (!found) throw new Error(`the console names no ops operation ${operationId}`);
        return found.spec;
      },
      customers: {
        ...customerDeps,
        offers: { validityMs: config.offerValidityMs, renewalDelayMs: config.offerRenewalDelayMs },
      },
      loans: loanDeps,
      temporalUi: { origin: config.temporal.uiOrigin, namespace: config.temporal.namespace },
      erasure: erasureDeps,
      pspConfigured: config.psp !== null,
      reconciliation: { db, temporal, logger, taskQueue: config.temporal.taskQueue },
      staff: staffDeps,
      https,
    }),
    hostedRoutes({
      customers: { ...customerDeps, ...verificationDeps },
      signing: { ...loanDeps, ...verificationDeps },
      https,
      throttle: {
        // A person at a link makes a handful of requests; a link hammered is being guessed at.
        perLinkAndAddress: new TokenBuckets(0.5, 30, now),
        perAddress: new TokenBuckets(2, 120, now),
      },
    }),
  ];

  // `X-Forwarded-For` counts only through the proxies configured in front (TRUSTED_PROXY_COUNT):
  // `ctx.ip` is the address the nearest of them saw, never an entry the client wrote itself.
  const koa = new Koa<AppState>({
    proxy: config.trustedProxyCount > 0,
    maxIpsCount: config.trustedProxyCount,
  });
  koa.silent = true;
  const tracing = activeTracing();
  if (tracing) koa.use(traceRequests(tracing.tracer));
  koa.use(
    requestContext(
      logger,
      metrics,
      securityHeaders(https),
      config.nodeEnv === 'development' ? 'debug' : 'info',
    ),
  );
  koa.use(problemHandler(config.publicBaseUrl));
  if (config.opsPort !== undefined) koa.use(separateOpsListener(config.opsPort));
  koa.use(requestBudget(config.requestTimeoutMs, config.publicBaseUrl));
  for (const router of routers) koa.use(router.routes());
  koa.use((ctx) => {
    const allowed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.match(ctx.path, ctx.method).path) {
        for (const method of layer.methods) allowed.add(method);
      }
    }
    if (allowed.size > 0 && !allowed.has(ctx.method))
      throw problems.methodNotAllowed(ctx.method, [...allowed]);
    throw problems.routeNotFound(ctx.method, ctx.path);
  });
  return {
    koa,
    close: async () => {
      mailer.close();
      // Outcomes of Idempotency-Keys still being stored (the database was away) get a moment.
      await idempotencyGuard.drain(5000);
      await Promise.all([credentials.close(), simulations.close()]);
    },
    ...documents,
    partnerOperations: partnerApi.operations,
  };
}

/** The OpenAPI documents, each built on first request from the mounted operations. */
function lazyDocuments(
  publicBaseUrl: string,
  partnerApi: ApiRouter,
  opsApi: ApiRouter,
  pspApi: ApiRouter,
) {
  let partner: unknown;
  let ops: unknown;
  let psp: unknown;
  return {
    partnerDocument: () =>
      (partner ??= buildOpenApiDocument(
        {
          title: 'Embedded credit partner API',
          description: `Register borrowers, run KYC, read pre-approved offers, simulate and take loans, and receive webhooks. Errors: /docs/errors.\n\n## Webhooks\n\n${webhookDeliveryText}`,
          serverUrl: `${publicBaseUrl}`,
          examples: partnerExamples(),
          webhooks: Object.fromEntries(
            eventCatalogue.map((type) => [
              type,
              {
                summary: eventMeanings[type],
                description: `${eventMeanings[type]} ${webhookDeliveryText.split('\n')[0]} How deliveries are signed and retried: the document's description, "Webhooks".`,
                // The component the events list answers (a request body would render an input twin).
                body: { $ref: `#/components/schemas/${componentName(type)}` },
              },
            ]),
          ),
          securitySchemes: {
            partner: {
              type: 'http',
              scheme: 'bearer',
              description: 'A token from POST /v3/auth/token.',
            },
          },
        },
        partnerApi.operations,
      )),
    opsDocument: () =>
      (ops ??= buildOpenApiDocument(
        {
          title: 'Embedded credit ops API',
          description: "The service staff's API: partners, reviews and back-office commands.",
          serverUrl: `${publicBaseUrl}`,
          securitySchemes: {
            ops: {
              type: 'http',
              scheme: 'bearer',
              description:
                'An operator’s own token (`opk_…`), or the break-glass `OPS_TOKEN` (every use of it audited and counted).',
            },
          },
        },
        opsApi.operations,
      )),
    pspDocument: () =>
      (psp ??= buildOpenApiDocument(
        {
          title: 'Embedded credit PSP API',
          description:
            'Where the payment service provider that holds the lender’s Pix key tells the service of Pix received (contract §14).',
          serverUrl: `${publicBaseUrl}`,
          securitySchemes: {
            psp: {
              type: 'apiKey',
              in: 'header',
              name: 'Pix-Signature',
              description:
                '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with PSP_WEBHOOK_SECRET, within 5 minutes of now.',
            },
          },
        },
        pspApi.operations,
      )),
  };
}
