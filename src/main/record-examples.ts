/**
 * `npm run examples:record`: runs the tests that drive the partner API with the test stack
 * recording every successful exchange (`RECORD_EXAMPLES`), keeps the smallest real exchange of
 * each operation, and writes them to src/http/examples/partner.json — the examples the reference
 * shows. Spectral (`npm run check`) validates each against its schema; test/api/docs.test.ts
 * checks every operation has one. Run it after an API change and commit the file.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  partnerExamplesFile,
  type OperationExample,
  type RecordedExchange,
} from '../http/examples/examples.js';
import { projectRoot } from '../project-root.js';
import { documentApp } from './document-app.js';

/** The files that, between them, make every partner operation succeed at least once. */
const everyOperation = [
  'test/sdk',
  'test/api',
  'test/e2e/customer-journey.test.ts',
  'test/e2e/loan-journey.test.ts',
  'test/e2e/sandbox-clock.test.ts',
  'test/e2e/webhooks.test.ts',
];
const args = process.argv.slice(2);
// `-- exchanges.jsonl`: choose again from a recording already made.
const reuse = args.length === 1 && args[0]!.endsWith('.jsonl') ? args[0] : undefined;
const recorded = reuse ?? join(mkdtempSync(join(tmpdir(), 'examples-')), 'exchanges.jsonl');
if (!reuse) {
  writeFileSync(recorded, '');
  const run = spawnSync('npx', ['vitest', 'run', ...(args.length > 0 ? args : everyOperation)], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, RECORD_EXAMPLES: recorded },
  });
  if (run.status !== 0)
    console.warn('some tests failed: the exchanges they made are kept all the same');
  console.log(`recorded: ${recorded}`);
}

// An example must be one the document allows: its request passes the operation's body schema as
// production configures it (a test's loopback webhook URL does not), its answer the response's.
const app = documentApp();
const specs = new Map(app.partnerOperations.map(({ spec }) => [spec.operationId, spec]));
const valid = ({ operationId, request, status, response }: RecordedExchange) => {
  const spec = specs.get(operationId);
  if (!spec) return false;
  if (request !== undefined && spec.body && !spec.body.safeParse(request).success) return false;
  const answer = spec.responses[status]?.schema;
  return response === undefined || !answer || answer.safeParse(response).success;
};
const size = (exchange: RecordedExchange) => JSON.stringify(exchange).length;
const chosen = new Map<string, RecordedExchange>();
for (const line of readFileSync(recorded, 'utf8').split('\n')) {
  if (!line) continue;
  // The test stack's address reads as the document's server.
  const exchange = JSON.parse(
    line.replace(/http:\/\/127\.0\.0\.1:\d+/g, 'https://api.example.com'),
  ) as RecordedExchange;
  if (!valid(exchange)) continue;
  const kept = chosen.get(exchange.operationId);
  // A request body shown beats none; then the smallest (a short page, a loan of few rows).
  const better =
    !kept ||
    (exchange.request !== undefined && kept.request === undefined) ||
    ((exchange.request !== undefined) === (kept.request !== undefined) &&
      size(exchange) < size(kept));
  if (better) chosen.set(exchange.operationId, exchange);
}
const examples: Record<string, OperationExample> = Object.fromEntries(
  [...chosen.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([operationId, { operationId: _id, ...example }]) => [operationId, example]),
);
writeFileSync(partnerExamplesFile, `${JSON.stringify(examples, null, 2)}\n`);
const missing = [...specs.keys()].filter((id) => !chosen.has(id));
if (missing.length > 0) console.warn(`no valid example for: ${missing.join(', ')}`);
await app.dispose();
console.log(`${chosen.size} operations' examples written to ${partnerExamplesFile}`);
