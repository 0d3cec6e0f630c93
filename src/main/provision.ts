/**
 * `npm run provision`: finds or builds everything the dev and test commands run besides npm
 * packages — both Temporal servers, MinIO, Mailpit and, for the browser tests, Chromium — and says
 * where it is.
 */
import { ensureChromium } from '../devstack/browser.js';
import { resolveMailpit } from '../devstack/mailpit.js';
import { resolveMinio } from '../devstack/minio.js';
import { resolveTemporalCli, resolveTestServer } from '../devstack/temporal-binaries.js';

const progress = (line: string) => process.stderr.write(`[provision] ${line}\n`);
try {
  const cli = await resolveTemporalCli(progress);
  console.log(`Temporal CLI:         ${cli.source}`);
  const testServer = await resolveTestServer(progress);
  console.log(`Temporal test server: ${testServer.source}`);
  const minio = await resolveMinio(progress);
  console.log(`MinIO:                ${minio.source}`);
  const mailpit = await resolveMailpit(progress);
  console.log(`Mailpit:              ${mailpit.source}`);
  if (process.argv.includes('--browser'))
    console.log(`Chromium:             ${await ensureChromium(progress)}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
