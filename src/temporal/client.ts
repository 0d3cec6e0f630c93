import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ClientInterceptors,
  type ConnectionOptions,
  type Metadata,
} from '@temporalio/client';
import { InterceptingCall } from '@grpc/grpc-js';
import type { KeyRing } from '../domain/key-ring.js';
import type { TemporalConnectionSecurity } from './connection-security.js';
import type { CustomerKeys } from './customer-keys.js';
import { payloadDataConverter, type PayloadEncryption } from './payload-codec.js';
import { tracingClientInterceptors } from '../observability/tracing.js';

/** What a client or worker needs to reach Temporal: `config.temporal` has every field. */
export interface TemporalSettings extends Partial<TemporalConnectionSecurity> {
  address: string;
  namespace: string;
  /** TEMPORAL_PAYLOAD_KEYS: every payload passes the codec (src/temporal/payload-codec.ts). */
  payloadKeys: KeyRing;
  payloadEncryption?: PayloadEncryption;
  /** The customers' data keys (customer-keys.ts): a customer's workflows' payloads are sealed under theirs. */
  customerKeys?: CustomerKeys | undefined;
}

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

const WORKFLOW_SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';

/**
 * How long each of our Temporal calls may take, retries included, by gRPC method: a request must
 * not hang on an unreachable or overloaded Temporal while the client retries (the request's own
 * budget, REQUEST_TIMEOUT, answers the partner first; this bounds the work left behind it). An
 * Update is sent (ExecuteMultiOperation), then its outcome awaited (PollWorkflowExecutionUpdate):
 * past its deadline the caller gets `WorkflowUpdateRPCTimeoutOrCancelledError`. The SDK polls
 * again only after an empty answer, which the server gives after its long-poll interval (20 s by
 * default), past our deadline: so each of the two waits ends at its first deadline (measured on the
 * dev server: an Update taken and never finished fails at 10.0 s).
 */
const callDeadlinesMs: Readonly<Record<string, number>> = {
  [`/${WORKFLOW_SERVICE}/StartWorkflowExecution`]: 5_000,
  [`/${WORKFLOW_SERVICE}/ExecuteMultiOperation`]: 10_000,
  [`/${WORKFLOW_SERVICE}/PollWorkflowExecutionUpdate`]: 10_000,
  // The cheap call of readiness probes and of the check at connect.
  [`/${WORKFLOW_SERVICE}/GetSystemInfo`]: 2_000,
};
/** Every other call (a signal, for one). None of ours is a long poll. */
const DEFAULT_CALL_DEADLINE_MS = 10_000;
/** How long a process starting up waits for Temporal to answer. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Gives each call the deadline of its method, unless it has one. Set per call by an interceptor,
 * not with `connection.withDeadline`: that runs the call in an AsyncLocalStorage, which turns on
 * promise hooks for every promise of the process from then on, a cost every request of the API
 * paid (docs/architecture.md, "Performance"). Outermost, so the retries share the deadline.
 */
const deadlines: GrpcInterceptor = (options, nextCall) =>
  new InterceptingCall(
    nextCall(
      options.deadline === undefined
        ? {
            ...options,
            deadline:
              Date.now() +
              (callDeadlinesMs[options.method_definition.path] ?? DEFAULT_CALL_DEADLINE_MS),
          }
        : options,
    ),
  );

/** The connection options of every Temporal client of ours (the API's, the worker's, the tests'). */
export function temporalConnectionOptions(
  settings: Pick<TemporalSettings, 'address' | 'tls' | 'apiKey'>,
): ConnectionOptions {
  return {
    address: settings.address,
    ...connectionSecurity(settings),
    interceptors: [deadlines, makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  };
}

/**
 * TLS (mutual with a client certificate) and the API key, for the SDK's `Connection` and the
 * worker's `NativeConnection` alike; nothing when neither is configured (plaintext).
 */
export function connectionSecurity(
  settings: Partial<TemporalConnectionSecurity>,
): Partial<TemporalConnectionSecurity> {
  return {
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
  };
}

const NAMESPACE_HEADER = 'temporal-namespace';

/**
 * A connection that sends its namespace's header on every call. The SDK sets that header call by
 * call, in `withMetadata`, an AsyncLocalStorage.run, which turns on promise hooks for every promise
 * of the process from then on: 12 % of the API's reads (docs/architecture.md, "Performance").
 * Here the header is static, so the SDK's per-call `withMetadata` of that same header is skipped;
 * any other metadata still goes through the SDK's.
 */
class NamespaceConnection extends Connection {
  override async withMetadata<R>(metadata: Metadata, fn: () => Promise<R>): Promise<R> {
    const names = Object.keys(metadata);
    const sameNamespace =
      names.length === 1 && metadata[NAMESPACE_HEADER] === this.options.metadata[NAMESPACE_HEADER];
    return sameNamespace ? fn() : super.withMetadata(metadata, fn);
  }
}

/** The API's client, not connected yet: its first call connects. */
export function lazyTemporalClient(settings: TemporalSettings): Client {
  const connection = NamespaceConnection.lazy({
    ...temporalConnectionOptions(settings),
    metadata: { [NAMESPACE_HEADER]: settings.namespace },
  });
  return new Client({
    connection,
    namespace: settings.namespace,
    dataConverter: payloadDataConverter(settings),
    // With tracing on, a start, signal or Update carries the caller's trace to the workflow.
    ...withTracing(),
  });
}

/**
 * The API's client, once its server has answered. Not `Connection.connect`: its check runs in
 * `withDeadline` (see `deadlines`); this is the same check, tried until CONNECT_TIMEOUT_MS.
 */
export async function connectTemporalClient(settings: TemporalSettings): Promise<Client> {
  const client = lazyTemporalClient(settings);
  const giveUpAt = Date.now() + CONNECT_TIMEOUT_MS;
  while (!(await temporalReachable(client))) {
    if (Date.now() >= giveUpAt) {
      await client.connection.close();
      throw new Error(`Temporal at ${settings.address} did not answer within 10 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return client;
}

/** True when the frontend answers a cheap call within its deadline (2 s). */
export async function temporalReachable(client: Client): Promise<boolean> {
  try {
    await client.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  }
}

/** The client interceptors of tracing, when it is on (src/observability/tracing.ts). */
export function withTracing(): { interceptors?: ClientInterceptors } {
  const interceptors = tracingClientInterceptors();
  return interceptors ? { interceptors } : {};
}
