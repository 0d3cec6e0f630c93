import type { Connection } from '@temporalio/client';
import { msNumberToTs } from '@temporalio/common';
import ms, { type StringValue } from 'ms';

/** A protobuf Duration's seconds arrive as a number or a Long: its decimal text reads either. */
interface ProtoDuration {
  seconds?: { toString(): string } | number | null;
  nanos?: number | null;
}
const durationToMs = (duration: ProtoDuration | null | undefined) =>
  Number(String(duration?.seconds ?? 0)) * 1000 + Math.round((duration?.nanos ?? 0) / 1e6);

/** Temporal refuses a namespace retention under one day. */
const MIN_RETENTION_MS = 86_400_000;
/** A closed history kept longer than this outlives any erasure deadline we could honour. */
const MAX_RETENTION_MS = 3650 * 86_400_000;

/**
 * A retention as ops write it (`30d`, `72h`, the `ms` format of every duration we take), checked
 * against what Temporal accepts (a day or more) and what erasure allows (ten years at most).
 */
export function parseRetention(text: string): number {
  const value = ms(text as StringValue) as number | undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || !/^\d+\s*[a-z]+$/i.test(text.trim()))
    throw new Error(`"${text}" is not a duration like 30d or 72h.`);
  if (value < MIN_RETENTION_MS)
    throw new Error(`${text}: Temporal keeps a closed history one day at least.`);
  if (value > MAX_RETENTION_MS)
    throw new Error(
      `${text}: more than ten years; closed histories hold customers' (encrypted) data and must age out within your erasure deadline.`,
    );
  return value;
}

/** The namespace's retention of closed workflow histories, in milliseconds. */
export async function namespaceRetention(
  connection: Connection,
  namespace: string,
): Promise<number> {
  const described = await connection.workflowService.describeNamespace({ namespace });
  return durationToMs(described.config?.workflowExecutionRetentionTtl);
}

/** Sets the namespace's retention (Temporal's UpdateNamespace) and answers it as read back. */
export async function setNamespaceRetention(
  connection: Connection,
  namespace: string,
  retentionMs: number,
): Promise<number> {
  await connection.workflowService.updateNamespace({
    namespace,
    config: {
      workflowExecutionRetentionTtl: msNumberToTs(retentionMs),
    },
  });
  return namespaceRetention(connection, namespace);
}
