/**
 * Writes the partner, ops and PSP OpenAPI documents to a folder, for `npm run check` to lint with
 * Spectral. The app is built with connections that are never dialled: only its routes are read.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createDatabase } from '../db/client.js';
import { createHttpMetrics } from '../http/metrics.js';
import { createLogger } from '../logger.js';

const outDir = process.argv[2] ?? 'dist/openapi';
const config = loadConfig({
  NODE_ENV: 'development',
  DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
  PUBLIC_BASE_URL: 'https://api.example.com',
  S3_BUCKET: 'unused', // the document is built from the routes; no file is stored
});
const database = createDatabase(config.databaseUrl, { max: 1 });
const app = createApp({
  config,
  database,
  temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
  logger: createLogger('silent'),
  metrics: createHttpMetrics({ processMetrics: false }),
});
await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, 'partner.json'), JSON.stringify(app.partnerDocument(), null, 2));
await writeFile(join(outDir, 'ops.json'), JSON.stringify(app.opsDocument(), null, 2));
await writeFile(join(outDir, 'psp.json'), JSON.stringify(app.pspDocument(), null, 2));
await app.close();
await database.close();
console.log(`OpenAPI documents written to ${outDir}: partner.json, ops.json and psp.json`);
