import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { components as Bcb } from '../../psp/bcb/api.js';
import type { components as Port } from '../../psp/payouts/api.js';

type Schemas = Bcb['schemas'];
export type Cob = Schemas['CobCompleta'];
export type CobV = Schemas['CobVCompleta'];
export type Pix = Schemas['Pix'];
export type Devolucao = Schemas['Devolucao'];
export type Payout = Port['schemas']['Payout'];
export type PayoutRequest = Port['schemas']['PayoutRequest'];

/** What the next payouts do (a control sets it): confirm at once, stay pending, or fail. */
export interface PayoutPolicy {
  outcome: 'confirmed' | 'pending' | 'failed';
  failureReason?: string;
}

/** Where a client's notifications go, and the secret they are signed with (§14). */
export interface NotificationTarget {
  url: string;
  secret: string;
}

/**
 * A client registered by a control (`PUT /_simulator/clients/{id}`): an account of its own at the
 * PSP, as each lender has, with its secret, its notification URLs and its payouts' policy.
 */
export interface ClientAccount {
  secret: string;
  notify?: NotificationTarget;
  notifyPayouts?: NotificationTarget;
  payoutPolicy?: PayoutPolicy;
}

/**
 * A failure a control set up (`POST /_simulator/faults`): the client's next `remaining` API calls
 * matching `method` and starting with `path` (any when absent) are answered `status`, as a PSP
 * that is down (5xx) or refuses (4xx) would, and do nothing.
 */
export interface Fault {
  status: number;
  remaining: number;
  method?: string;
  path?: string;
}

export interface SimulatorState {
  /** Added to the wall clock (a control moves it), so tests expire charges without waiting. */
  clockOffsetMs: number;
  nextLocationId: number;
  cobs: Record<string, { kind: 'cob'; record: Cob } | { kind: 'cobv'; record: CobV }>;
  /** Every Pix received, by end-to-end id, with the devolucoes asked for it. */
  pix: Record<string, Pix>;
  payouts: Record<string, Payout>;
  /** Idempotency key → payout id, the request it came with (to refuse a different one), its client. */
  payoutKeys: Record<string, { id: string; request: string; client?: string }>;
  /** The starting client's policy (a registered client keeps its own in its account). */
  payoutPolicy: PayoutPolicy;
  clients: Record<string, ClientAccount>;
  /** Whose each charge (by txid) and payout (by id) is; absent: the starting client's. */
  chargeClients: Record<string, string>;
  payoutClients: Record<string, string>;
  /** Failures set up per client, by client id. */
  faults: Record<string, Fault[]>;
}

const empty = (): SimulatorState => ({
  clockOffsetMs: 0,
  nextLocationId: 1,
  cobs: {},
  pix: {},
  payouts: {},
  payoutKeys: {},
  payoutPolicy: { outcome: 'confirmed' },
  clients: {},
  chargeClients: {},
  payoutClients: {},
  faults: {},
});

/**
 * The simulator's state in one JSON file, rewritten whole (a temporary file renamed over it) after
 * every change, so a restart — or a kill at any point — finds the last complete state. The
 * simulator handles one request at a time to the end of its write, which is all it needs.
 */
export class StateFile {
  readonly state: SimulatorState;
  /** Goes up at every save: what was read before is stale (the Pix listing's cache). */
  version = 0;

  /** `startingClient`: the client of the simulator's options, who owns what names no client. */
  constructor(
    private readonly file: string,
    readonly startingClient: string,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.state = StateFile.read(file);
  }

  private static read(file: string): SimulatorState {
    try {
      return { ...empty(), ...(JSON.parse(readFileSync(file, 'utf8')) as Partial<SimulatorState>) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty();
      throw error;
    }
  }

  save(): void {
    this.version += 1;
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.state));
    renameSync(temporary, this.file);
  }

  now(): Date {
    return new Date(Date.now() + this.state.clockOffsetMs);
  }

  /** The client whose charge `txid` is (a Pix belongs to its charge's client). */
  chargeClient(txid: string | undefined): string {
    return this.state.chargeClients[txid ?? ''] ?? this.startingClient;
  }

  payoutClient(id: string): string {
    return this.state.payoutClients[id] ?? this.startingClient;
  }

  /** Takes the next failure set up for this call of `client`, if one matches. */
  takeFault(client: string, method: string, path: string): Fault | undefined {
    const faults = this.state.faults[client] ?? [];
    const fault = faults.find(
      (candidate) =>
        (candidate.method === undefined || candidate.method === method.toUpperCase()) &&
        (candidate.path === undefined || path.startsWith(candidate.path)),
    );
    if (!fault) return undefined;
    fault.remaining -= 1;
    this.state.faults[client] = faults.filter((candidate) => candidate.remaining > 0);
    this.save();
    return fault;
  }

  payoutPolicy(client: string): PayoutPolicy {
    return client === this.startingClient
      ? this.state.payoutPolicy
      : (this.state.clients[client]?.payoutPolicy ?? { outcome: 'confirmed' });
  }
}
