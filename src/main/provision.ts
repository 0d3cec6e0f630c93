/**
 * `npm run provision`: finds or builds everything the dev and test commands run besides npm
 * packages — both Temporal servers, MinIO and its client (mc), Mailpit, promtool (the alert rules'
 * tests), PostgreSQL's client tools (backup and restore) and, for the browser tests, Chromium — and says where it is. `--cluster` adds the real Temporal server on PostgreSQL and its Web UI.
 */
import { ensureChromium } from '../devstack/browser.js';
import { resolveMailpit } from '../devstack/mailpit.js';
import { resolveMinio, resolveMinioClient } from '../devstack/minio.js';
import { resolvePostgresClientTools } from '../devstack/postgres-client-tools.js';
import { resolvePromtool } from '../devstack/promtool.js';
import { resolveTemporalCli, resolveTestServer } from '../devstack/temporal-binaries.js';
import { resolveTemporalServer, resolveTemporalUi } from '../devstack/temporal-server.js';

const progress = (line: string) => process.stderr.write(`[provision] ${line}\n`);
try {
  const cli = await resolveTemporalCli(progress);
  console.log(`Temporal CLI:         ${cli.source}`);
  const testServer = await resolveTestServer(progress);
  console.log(`Temporal test server: ${testServer.source}`);
  const minio = await resolveMinio(progress);
  console.log(`MinIO:                ${minio.source}`);
  const mc = await resolveMinioClient(progress);
  console.log(`MinIO client (mc):    ${mc.source}`);
  const mailpit = await resolveMailpit(progress);
  console.log(`Mailpit:              ${mailpit.source}`);
  const promtool = await resolvePromtool(progress);
  console.log(`promtool:             ${promtool.source}`);
  console.log(`pg_dump, pg_restore:  ${(await resolvePostgresClientTools(progress)).source}`);
  // `--cluster`: the real Temporal server (with its SQL tool and schemas) and its Web UI, built
  // only when asked, so `npm test` does not pay for their build.
  if (process.argv.includes('--cluster')) {
    const server = await resolveTemporalServer(progress);
    console.log(`Temporal server:      ${server.source}`);
    console.log(`Temporal UI server:   ${await resolveTemporalUi(progress)}`);
  }
  if (process.argv.includes('--browser'))
    console.log(`Chromium:             ${await ensureChromium(progress)}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
