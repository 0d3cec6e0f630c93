import { context, propagation, ROOT_CONTEXT, trace, type Tracer } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type { Sampler, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import type * as TemporalTracing from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { TracingConfig, TracesSampler } from './tracing-config.js';

/**
 * OpenTelemetry traces of one process (the API's, the worker's): the SDK registered once, spans
 * batched and sent by OTLP over HTTP. Off (undefined) unless configured, and then nothing of it
 * runs: no context manager (its AsyncLocalStorage costs every promise of the process), no client
 * or worker interceptor, no span, no connection; the SDK's modules are not even loaded (14 MB).
 *
 * One trace follows a request: the API's server span (src/http/middleware/trace-requests.ts), the
 * Temporal client's StartWorkflow/SignalWorkflow/UpdateWorkflow spans, whose context travels in the
 * call's headers, the workflow's RunWorkflow and StartActivity spans (made in the workflow sandbox,
 * handed out by a sink), and each activity's RunActivity span.
 */
export interface Tracing {
  readonly tracer: Tracer;
  readonly resource: Resource;
  /** The batch processor every span ends in, the workflow sandbox's too. */
  readonly processor: SpanProcessor;
  /** Sends what is batched and stops (the process is stopping). */
  shutdown(): Promise<void>;
  /** Temporal's interceptors, loaded with the SDK. */
  readonly temporal: typeof TemporalTracing;
}

let current: Tracing | undefined;

/** The process's tracing, when on. */
export const activeTracing = (): Tracing | undefined => current;

/** Starts tracing for this process when configured (once; later calls return the first). */
export async function startTracing(
  config: TracingConfig | undefined,
  defaultServiceName: string,
): Promise<Tracing | undefined> {
  if (!config) return undefined;
  if (current) return current;
  const [{ OTLPTraceExporter }, { Resource }, base, { NodeTracerProvider }, temporal] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/sdk-trace-node'),
      import('@temporalio/interceptors-opentelemetry'),
    ]);
  const resource = new Resource({
    'service.name': config.serviceName ?? defaultServiceName,
    'service.version': process.env.npm_package_version ?? '0.1.0',
  });
  const processor = new base.BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }), {
    // A request's spans leave within a second; a collector away costs memory up to the queue only.
    scheduledDelayMillis: 1000,
    maxQueueSize: 4096,
  });
  const provider = new NodeTracerProvider({
    resource,
    sampler: samplerFor(base, config.sampler, config.ratio),
    spanProcessors: [processor],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator, globally.
  provider.register();
  current = {
    tracer: trace.getTracer('embedded-credit'),
    resource,
    processor,
    temporal,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      current = undefined;
    },
  };
  return current;
}

function samplerFor(base: typeof TraceBase, name: TracesSampler, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new base.AlwaysOnSampler();
    case 'always_off':
      return new base.AlwaysOffSampler();
    case 'traceidratio':
      return new base.TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new base.ParentBasedSampler({ root: new base.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new base.ParentBasedSampler({ root: new base.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new base.ParentBasedSampler({ root: new base.TraceIdRatioBasedSampler(ratio) });
  }
}

/** The Temporal client's interceptors with tracing on (every client of ours: API, worker, tests). */
export function tracingClientInterceptors(): ClientInterceptors | undefined {
  if (!current) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } = current.temporal;
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: current.tracer })] };
}

/**
 * What a worker adds with tracing on: the activities' interceptors and the sink the workflow
 * sandbox hands its spans to. The workflow side is in the bundle (workflows/tracing-interceptors.ts).
 */
export function tracingWorkerOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const tracing = current;
  // Off: a sink that drops what a workflow started by a traced process (an API with tracing on,
  // a worker without) would hand out, rather than the SDK's warning of a missing sink.
  if (!tracing) return { sinks: { exporter: { export: { fn: () => {} } } } };
  const {
    makeWorkflowExporter,
    OpenTelemetryActivityInboundInterceptor,
    OpenTelemetryActivityOutboundInterceptor,
  } = tracing.temporal;
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) },
  };
}

/**
 * The active trace context as W3C headers (`traceparent`, `tracestate`), for a record that makes
 * work happen later (an outbox row); null with tracing off or outside any trace.
 */
export function currentTraceContext(): Record<string, string> | null {
  if (!current) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : null;
}

/** Runs `work` in the trace context a record kept (see currentTraceContext), when there is one. */
export function withTraceContext<T>(kept: Record<string, string> | null, work: () => T): T {
  if (!current || !kept) return work();
  return context.with(propagation.extract(ROOT_CONTEXT, kept), work);
}
