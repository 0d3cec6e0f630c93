import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import type { Db } from '../db/client.js';
import { findCredentialForAuthentication, type Credential } from '../db/queries/credentials.js';
import type { Logger } from '../logger.js';

/** Notified by a trigger (migration 0007) with the client_id of a credential revoked or removed. */
export const CREDENTIAL_CHANNEL = 'credential_changed';
const RELISTEN_DELAY_MS = 1_000;
/** How long a revocation waits for its own notification to come back. */
const ECHO_TIMEOUT_MS = 2_000;

export interface CredentialCache {
  /** The credential of a client_id: from memory while this process hears every change. */
  find(clientId: string): Promise<Credential | undefined>;
  /**
   * Runs `change` (a transaction revoking or removing a client_id's credential) and, when it found
   * one, waits (at most 2 s) for the change's notification to come back: PostgreSQL sends it to
   * every listening process at once, so when it is back here the others have it too. The wait is
   * set up before the change, so a notification that beats the transaction's answer still counts.
   */
  changing<T>(clientId: string, change: () => Promise<T | undefined>): Promise<T | undefined>;
  close(): Promise<void>;
}

/**
 * Credentials by client_id for the request path, so authentication costs no database round trip.
 *
 * Revocation stays immediate in every API process: a trigger notifies `credential_changed`, and
 * each process, listening on a connection of its own, drops that entry. Nothing is served from
 * memory unless the listening connection is up: when it closes, the cache empties and every
 * request reads the row until `LISTEN` is back. A notification lost without the connection being
 * seen to close (a half-open socket) is bounded by `maxAgeMs`: no entry is older than that.
 * An entry read before a change but stored after it would outlive the change, so an entry is
 * stored only if no notification arrived while it was read.
 */
export function createCredentialCache(options: {
  db: Db;
  databaseUrl: string;
  maxAgeMs: number;
  logger: Logger;
}): CredentialCache {
  const { db, maxAgeMs, logger } = options;
  const entries = new Map<string, { credential: Credential; storedAt: number }>();
  const echoes = new Map<string, Set<() => void>>();
  let generation = 0;
  let listening = false;
  let relistening = false;
  let closed = false;

  const forgetAll = () => {
    entries.clear();
    generation++;
  };
  const forget = (clientId: string) => {
    entries.delete(clientId);
    generation++;
    for (const resolve of echoes.get(clientId) ?? []) resolve();
    echoes.delete(clientId);
  };

  const listener =
    maxAgeMs > 0
      ? postgres(options.databaseUrl, {
          max: 1,
          idle_timeout: 0,
          max_lifetime: 0,
          connect_timeout: 5,
          fetch_types: false,
          onnotice: () => {},
          connection: { application_name: 'embedded-credit-credential-listener' },
          onclose: () => {
            if (listening) logger.warn('credential notifications lost; reading every credential');
            listening = false;
            forgetAll();
            if (!closed) void listen();
          },
          // Not in the package's types, but the documented way `sql.listen` is built on:
          // notifications of this connection, whatever the channel.
          ...({ onnotify: (channel: string, clientId: string) => forget(clientId) } as object),
        })
      : undefined;

  async function listen(): Promise<void> {
    if (!listener || relistening || listening) return;
    relistening = true;
    try {
      while (!closed) {
        try {
          await listener.unsafe(`listen ${CREDENTIAL_CHANNEL}`);
          forgetAll(); // whatever changed while nobody listened
          listening = true;
          return;
        } catch (error) {
          logger.warn({ err: error }, 'cannot listen for credential changes; retrying');
          await new Promise((resolve) => setTimeout(resolve, RELISTEN_DELAY_MS));
        }
      }
    } finally {
      relistening = false;
    }
  }
  void listen();

  return {
    async find(clientId) {
      const now = performance.now();
      const entry = entries.get(clientId);
      if (listening && entry && now - entry.storedAt < maxAgeMs) return entry.credential;
      const readAt = generation;
      const credential = await findCredentialForAuthentication(db, clientId);
      if (credential && listening && generation === readAt) {
        entries.set(clientId, { credential, storedAt: now });
      }
      return credential;
    },
    async changing(clientId, change) {
      let echoed!: () => void;
      const echo = new Promise<void>((resolve) => (echoed = resolve));
      const waiting = echoes.get(clientId) ?? new Set();
      waiting.add(echoed);
      echoes.set(clientId, waiting);
      let timer: NodeJS.Timeout | undefined;
      try {
        const result = await change();
        if (result !== undefined && listening) {
          await Promise.race([
            echo,
            new Promise((resolve) => (timer = setTimeout(resolve, ECHO_TIMEOUT_MS))),
          ]);
        }
        return result;
      } finally {
        clearTimeout(timer);
        waiting.delete(echoed);
        if (waiting.size === 0 && echoes.get(clientId) === waiting) echoes.delete(clientId);
        entries.delete(clientId);
        generation++;
      }
    },
    async close() {
      closed = true;
      listening = false;
      await listener?.end({ timeout: 1 });
    },
  };
}
