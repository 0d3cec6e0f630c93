/**
 * `npm run ledger:check`: the ledger's reconciliation against the database at DATABASE_URL (the
 * same check the test suite runs). Prints each finding — the loan or transaction and what does
 * not hold — and exits 1 when there is any.
 */
import { createDatabase } from '../db/client.js';
import { ledgerCheckReport } from '../db/queries/ledger.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('ledger:check needs DATABASE_URL (the database to check).');
  process.exit(2);
}
const database = createDatabase(url, { max: 2 });
try {
  const report = await ledgerCheckReport(database.db);
  for (const line of report.lines) console.log(line);
  process.exitCode = report.ok ? 0 : 1;
} finally {
  await database.close();
}
