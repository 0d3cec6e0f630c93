import { createServer, type Server } from 'node:http';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

export interface WorkerMetrics {
  readonly registry: Registry;
  /** Stored files removed because no row named them a day after they were written. */
  readonly orphansRemoved: Counter;
}

export function createWorkerMetrics(options: { processMetrics: boolean }): WorkerMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return {
    registry,
    orphansRemoved: new Counter({
      name: 'file_store_orphans_removed_total',
      help: 'Stored files removed by the orphan sweeper (no document or loan named them after a day).',
      registers: [registry],
    }),
  };
}

/** The SDK's exporter answers on loopback at once; a scrape waits for it this long at most. */
const SDK_METRICS_TIMEOUT_MS = 2_000;

/** The Temporal SDK's own figures, as its Prometheus exporter writes them (empty if it fails). */
async function sdkMetricsText(url: string): Promise<string> {
  try {
    const answer = await fetch(url, { signal: AbortSignal.timeout(SDK_METRICS_TIMEOUT_MS) });
    return answer.ok ? await answer.text() : '';
  } catch {
    return '';
  }
}

/**
 * `GET /metrics` of a worker process, for Prometheus (WORKER_METRICS_PORT; loopback by default):
 * the process's own figures, then the Temporal SDK's (`temporal_*`: workflow task failures,
 * schedule-to-start latency, pollers, slots…), which its Core exports on a listener of its own on
 * loopback (`sdkMetricsUrl`). One target per worker: one `up`, one port to publish and scrape.
 */
export async function serveWorkerMetrics(
  metrics: WorkerMetrics,
  port: number,
  host: string,
  sdkMetricsUrl?: string,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    Promise.all([
      metrics.registry.metrics(),
      sdkMetricsUrl ? sdkMetricsText(sdkMetricsUrl) : '',
    ]).then(
      ([own, sdk]) =>
        res
          .writeHead(200, { 'Content-Type': metrics.registry.contentType })
          .end(sdk ? `${own}\n${sdk}` : own),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return server;
}
