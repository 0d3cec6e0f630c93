/** `npm run provision`: builds or finds both Temporal servers ahead of time and prints where they are. */
import { resolveTemporalCli, resolveTestServer } from '../devstack/temporal-binaries.js';

try {
  const cli = await resolveTemporalCli();
  console.log(`Temporal CLI:         ${cli.source}`);
  const testServer = await resolveTestServer();
  console.log(`Temporal test server: ${testServer.source}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
