/**
 * Names for the generated types (src/generated/partner.ts): every shape here is derived from the
 * partner OpenAPI document, so a change of the document changes these types and, where the SDK
 * relies on a field that went away, fails its compilation.
 */
import type { components, paths } from './generated/partner.js';

export type { components, paths, operations, webhooks } from './generated/partner.js';

type Schemas = components['schemas'];

type Operation<P extends keyof paths, M extends keyof paths[P]> = paths[P][M];

/** The JSON request body of an operation. */
export type JsonBody<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : never;

/** The query parameters of an operation. */
export type Query<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** A list operation's query without the cursor, which the iterator moves. */
export type ListQuery<P extends keyof paths> = Omit<Query<P, 'get'>, 'starting_after'>;

export type Customer = Schemas['Customer'];
export type KycItem = Schemas['KycItem'];
export type Document = Schemas['Document'];
export type BiometricsSession = Schemas['BiometricsSession'];
export type CreditOffer = Schemas['CreditOffer'];
export type Simulation = Schemas['Simulation'];
export type Loan = Schemas['Loan'];
export type LoanTransaction = Schemas['LoanTransaction'];
export type LoanPayoff = Schemas['LoanPayoff'];
export type Charge = Schemas['Charge'];
export type Event = Schemas['Event'];
export type EventType = Event['type'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Credential = Schemas['Credential'];
export type CreatedCredential = Schemas['CreatedCredential'];
export type CustomerClock = Schemas['CustomerClock'];
export type Token = Schemas['Token'];
export type Problem = Schemas['Problem'];
export type ValidationProblem = Schemas['ValidationProblem'];
/** One invalid field of a 422 `validation_error`. */
export type FieldError = ValidationProblem['errors'][number];
