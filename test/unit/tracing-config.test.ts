import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseTracingConfig } from '../../src/observability/tracing-config.js';

describe('the tracing settings (OTEL_*)', () => {
  it('leaves tracing off without an endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(parseTracingConfig({})).toEqual({ tracing: undefined, problems: [] });
    expect(
      parseTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_SDK_DISABLED: 'true',
      }),
    ).toEqual({ tracing: undefined, problems: [] });
  });

  it('sends to <endpoint>/v1/traces, or to the traces endpoint as given, which wins', () => {
    expect(
      parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }).tracing,
    ).toEqual({
      tracesUrl: 'http://127.0.0.1:4318/v1/traces',
      serviceName: undefined,
      sampler: 'parentbased_always_on',
      ratio: 1,
    });
    expect(
      parseTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.internal/otlp/traces',
        OTEL_SERVICE_NAME: 'api-blue',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }).tracing,
    ).toEqual({
      tracesUrl: 'https://collector.internal/otlp/traces',
      serviceName: 'api-blue',
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
    });
  });

  it('reports every bad setting, and the process refuses to start on them', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_SAMPLER_ARG: '1.5',
    };
    expect(parseTracingConfig(env)).toEqual({
      tracing: undefined,
      problems: [
        'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL (OTLP over HTTP)',
        expect.stringMatching(/^OTEL_TRACES_SAMPLER: must be one of always_on, /),
        'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1',
      ],
    });
    let refused: unknown;
    try {
      loadConfig({ NODE_ENV: 'development', ...env });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual(
      expect.arrayContaining(parseTracingConfig(env).problems),
    );
  });
});
