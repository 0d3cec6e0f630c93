/**
 * The tracing settings, read from the OpenTelemetry SDK's standard variables so a collector's
 * usual configuration works as is. Tracing is off unless an OTLP endpoint is set (and off when
 * OTEL_SDK_DISABLED=true): then nothing is started, nothing connects and no request pays for it.
 */
export interface TracingConfig {
  /** Where spans go, OTLP over HTTP (protobuf), e.g. http://127.0.0.1:4318/v1/traces. */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME; by default each process's own (embedded-credit-api, …-worker). */
  serviceName: string | undefined;
  sampler: TracesSampler;
  /** OTEL_TRACES_SAMPLER_ARG: the ratio of the traceidratio samplers, 0 to 1. */
  ratio: number;
}

export const tracesSamplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TracesSampler = (typeof tracesSamplers)[number];

/** Parses the OTEL_* variables we honour; every problem is returned, as loadConfig reports them. */
export function parseTracingConfig(env: NodeJS.ProcessEnv): {
  tracing: TracingConfig | undefined;
  problems: string[];
} {
  const problems: string[] = [];
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  // The signal's own endpoint is the full URL; the general one is a base the path is added to.
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesUrl = signal || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  const named = signal ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (tracesUrl !== undefined && !isHttpUrl(tracesUrl))
    problems.push(`${named}: must be an http:// or https:// URL (OTLP over HTTP)`);

  const sampler = (env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on') as TracesSampler;
  if (!tracesSamplers.includes(sampler))
    problems.push(`OTEL_TRACES_SAMPLER: must be one of ${tracesSamplers.join(', ')}`);
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = ratioText ? Number(ratioText) : 1;
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    problems.push('OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1');

  const serviceName = env.OTEL_SERVICE_NAME?.trim() || undefined;
  if (disabled || tracesUrl === undefined || problems.length > 0)
    return { tracing: undefined, problems };
  return { tracing: { tracesUrl, serviceName, sampler, ratio }, problems };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
