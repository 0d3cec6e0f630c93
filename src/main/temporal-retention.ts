/**
 * `npm run temporal:retention [-- <duration>]`: how long the Temporal namespace keeps closed
 * workflow histories (they hold customers' data, encrypted with keys erasure can shred), read, or
 * set to `<duration>` (`30d`, `72h`; a day at least). Reaches Temporal as the worker does
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS and API key settings).
 */
import { Connection } from '@temporalio/client';
import ms from 'ms';
import { loadConfig } from '../config.js';
import { temporalConnectionOptions } from '../temporal/client.js';
import {
  namespaceRetention,
  parseRetention,
  setNamespaceRetention,
} from '../temporal/retention.js';

const wanted = process.argv[2];
let retentionMs: number | undefined;
try {
  retentionMs = wanted === undefined ? undefined : parseRetention(wanted);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const { temporal } = loadConfig();
const connection = await Connection.connect(temporalConnectionOptions(temporal));
try {
  const before = await namespaceRetention(connection, temporal.namespace);
  if (retentionMs === undefined)
    console.log(`${temporal.namespace}: closed histories kept ${ms(before, { long: true })}`);
  else {
    const after = await setNamespaceRetention(connection, temporal.namespace, retentionMs);
    console.log(
      `${temporal.namespace}: closed histories kept ${ms(after, { long: true })} (was ${ms(before, { long: true })})`,
    );
  }
} finally {
  await connection.close();
}
