import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJaeger, type JaegerServer } from '../../src/devstack/jaeger.js';
import { REQUEST_ID_ATTRIBUTE } from '../../src/http/middleware/trace-requests.js';
import { parseTracingConfig } from '../../src/observability/tracing-config.js';
import { startTracing, type Tracing } from '../../src/observability/tracing.js';
import { fakeCpf } from '../helpers/customers.js';
import { recordHistory } from '../helpers/histories.js';
import { client, createPartner, tokenFor } from '../helpers/partners.js';
import { eventually, startStack, type TestStack } from '../helpers/stack.js';

/** Jaeger's query API (/api/traces): the shape of what we read. */
interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
}

const SERVICE = `embedded-credit-trace-test-${randomUUID().slice(0, 8)}`;

/**
 * One partner request, one trace, exported by OTLP to a real Jaeger (docs/operations/jaeger/
 * jaeger.yaml) and read back from its query API. Registering a customer starts two workflows: the
 * customer's onboarding, which runs for as long as the customer does (its RunWorkflow span ends,
 * and is exported, when the workflow does), and the delivery of `customer.created` to the
 * partner's endpoint, which ends once delivered: its chain is whole within a second.
 */
describe('traces of a partner request, API → workflow → activity, in Jaeger', () => {
  let jaeger: JaegerServer;
  let tracing: Tracing | undefined;
  let stack: TestStack;
  let receiver: Server;
  const logLines: string[] = [];
  const delivered: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      delivered.push(req.headers);
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    jaeger = await startJaeger();
    const { tracing: config, problems } = parseTracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      OTEL_SERVICE_NAME: SERVICE,
    });
    expect(problems).toEqual([]);
    // Before the stack: its app, clients and worker add their tracing parts when it is on.
    tracing = await startTracing(config, 'unused');
    stack = await startStack({
      env: { LOG_LEVEL: 'info', WEBHOOK_ALLOW_LOOPBACK_HTTP: 'true' },
      logDestination: { write: (line: string) => void logLines.push(line) },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await tracing?.shutdown();
    await jaeger?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('registering a customer yields one trace: API → StartWorkflow → RunWorkflow → StartActivity → RunActivity, parents intact', async () => {
    const partner = await createPartner(stack);
    const api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
    const port = (receiver.address() as AddressInfo).port;
    const endpoint = await api('/v3/webhooks/endpoints', {
      method: 'POST',
      body: { url: `http://localhost:${port}/hook`, events: ['customer.created'] },
    });
    expect(endpoint.status).toBe(201);

    const response = await api('/v3/customers', {
      method: 'POST',
      body: {
        cpf: fakeCpf({ notStartingWith9: true }),
        name: 'Maria Silva',
        email: `maria.${randomUUID().slice(0, 8)}@example.com`,
        phone: '+5511987654321',
      },
    });
    expect(response.status).toBe(201);
    const customer = (await response.json()) as { id: string };
    // Partners see the request id, as before; the trace's own ids stay inside.
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^req_/);
    expect(response.headers.get('traceparent')).toBeNull();

    // Ops find the trace by the request id (a span tag); spans come in as they end.
    const tags = encodeURIComponent(JSON.stringify({ [REQUEST_ID_ATTRIBUTE]: requestId }));
    const traceId = await eventually(async () => {
      const found = await fetch(`${jaeger.uiUrl}/api/traces?service=${SERVICE}&tags=${tags}`);
      const { data } = (await found.json()) as { data: JaegerTrace[] | null };
      return data?.length === 1 ? data[0]!.traceID : undefined;
    }, 'the request’s trace in Jaeger');

    const onboarding = 'customerOnboardingWorkflow';
    const delivery = 'webhookDeliveryWorkflow';
    const spans = await eventually(async () => {
      const found = await fetch(`${jaeger.uiUrl}/api/traces/${traceId}`);
      if (!found.ok) return undefined;
      const { data } = (await found.json()) as { data: JaegerTrace[] };
      const all = data[0]?.spans ?? [];
      const names = new Set(all.map((span) => span.operationName));
      return names.has(`RunWorkflow:${delivery}`) &&
        names.has('RunActivity:attemptDelivery') &&
        names.has('RunActivity:runCreditAnalysis')
        ? all
        : undefined;
    }, 'the workflows’ and activities’ spans in the trace');

    const named = (name: string) => {
      const matching = spans.filter((span) => span.operationName === name);
      expect(matching, name).toHaveLength(1);
      return matching[0]!;
    };
    const parentOf = (span: JaegerSpan) =>
      span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
    const tag = (span: JaegerSpan, key: string) =>
      span.tags.find((candidate) => candidate.key === key)?.value;
    for (const span of spans) expect(span.traceID).toBe(traceId);

    // The request is the root: a partner's traceparent is never continued.
    const server = named('POST /v3/customers');
    expect(parentOf(server)).toBeUndefined();
    expect(tag(server, 'http.route')).toBe('/v3/customers');
    expect(tag(server, 'http.response.status_code')).toBe(201);

    // The delivery: started after the request's commit, run, its activity scheduled and run.
    const startDelivery = named(`StartWorkflow:${delivery}`);
    const runDelivery = named(`RunWorkflow:${delivery}`);
    const scheduleAttempt = named('StartActivity:attemptDelivery');
    const attempt = named('RunActivity:attemptDelivery');
    expect(parentOf(startDelivery)).toBe(server.spanID);
    expect(parentOf(runDelivery)).toBe(startDelivery.spanID);
    expect(parentOf(scheduleAttempt)).toBe(runDelivery.spanID);
    expect(parentOf(attempt)).toBe(scheduleAttempt.spanID);

    // The onboarding, still running: its start and its first activity, under its run's span,
    // which Jaeger receives when the workflow ends.
    const startOnboarding = named(`StartWorkflow:${onboarding}`);
    const scheduleAnalysis = named('StartActivity:runCreditAnalysis');
    const analysis = named('RunActivity:runCreditAnalysis');
    expect(String(tag(runDelivery, 'workflowId'))).toMatch(/^webhook-delivery\//);
    expect(parentOf(startOnboarding)).toBe(server.spanID);
    expect(parentOf(analysis)).toBe(scheduleAnalysis.spanID);
    expect(tag(analysis, 'temporalWorkflowId')).toBe(`customer-onboarding/${customer.id}`);
    expect(spans.some((span) => span.spanID === parentOf(scheduleAnalysis))).toBe(false);

    // No trace context leaves the service: the partner's receiver got none.
    expect(delivered.length).toBeGreaterThan(0);
    for (const headers of delivered) expect(headers.traceparent).toBeUndefined();

    // A traced run's history (its start and activities carry the trace context in their headers)
    // replays like any other: the workflow side of tracing is deterministic.
    await recordHistory(
      stack.temporal.workflow.getHandle(String(tag(runDelivery, 'workflowId'))),
      'webhook-delivery',
      'traced-delivered',
    );

    // The request's log lines name the trace, so a log line leads to its trace and back.
    const access = logLines
      .map((line) => JSON.parse(line) as { msg: string; requestId?: string; traceId?: string })
      .find((line) => line.msg === 'request' && line.requestId === requestId);
    expect(access?.traceId).toBe(traceId);
  });
});
