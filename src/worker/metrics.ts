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

/** `GET /metrics` of a worker process, for Prometheus (WORKER_METRICS_PORT; loopback by default). */
export async function serveWorkerMetrics(
  metrics: WorkerMetrics,
  port: number,
  host: string,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return server;
}
