import { createHash, randomBytes } from 'node:crypto';
import { findSessionByTokenHash, type BiometricSession } from '../db/queries/biometric-sessions.js';
import { findCustomer } from '../db/queries/customers.js';
import { newId } from '../domain/ids.js';
import { ProblemError, problems } from '../errors.js';
import type { Tenant } from '../domain/tenant.js';
import { changeCustomer } from '../temporal/customer-workflows.js';
import {
  completeBiometricsUpdate,
  openBiometricsUpdate,
} from '../../workflows/customer-onboarding/messages.js';
import type { CustomerDeps } from './customer-deps.js';

export const BIOMETRICS_SESSION_MS = 15 * 60 * 1000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Opens a capture session (superseding any earlier one) whose URL is a page of this service. The
 * token in the URL is the session's only key; only its hash is stored, and only the hash reaches
 * the workflow.
 */
export async function openBiometrics(
  deps: CustomerDeps,
  tenant: Tenant,
  customerId: string,
): Promise<{ session_url: string; expires_at: string }> {
  const customer = await findCustomer(deps.db, tenant, customerId);
  if (!customer) throw problems.notFound('customer_not_found', `No customer ${customerId}.`);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(deps.clock().getTime() + BIOMETRICS_SESSION_MS).toISOString();
  await changeCustomer(deps, customer, openBiometricsUpdate, [
    { sessionId: newId('bio'), tokenHash: hashToken(token), expiresAt },
  ]);
  return { session_url: `${deps.publicBaseUrl}/hosted/biometrics/${token}`, expires_at: expiresAt };
}

export type SessionView = 'open' | 'completed' | 'expired' | 'superseded' | 'unknown';
/** What completing a session can end in: never still open. */
export type CompletionOutcome = Exclude<SessionView, 'open'>;

/** An open session past its deadline is expired, whether or not its timer has fired yet. */
function viewOf(session: BiometricSession | undefined, now: Date): SessionView {
  if (!session) return 'unknown';
  if (session.status === 'open' && session.expiresAt.getTime() <= now.getTime()) return 'expired';
  return session.status;
}

/** What the hosted page shows for a token, without changing anything. */
export async function viewBiometricsSession(
  deps: CustomerDeps,
  token: string,
): Promise<SessionView> {
  return viewOf(await findSessionByTokenHash(deps.db, hashToken(token)), deps.clock());
}

/** The customer finished the capture on the hosted page: the biometrics item becomes submitted. */
export async function completeBiometrics(
  deps: CustomerDeps,
  token: string,
): Promise<CompletionOutcome> {
  const session = await findSessionByTokenHash(deps.db, hashToken(token));
  if (!session) return 'unknown';
  const view = viewOf(session, deps.clock());
  if (view !== 'open') return view;
  const tenant = { partnerId: session.partnerId, environment: session.environment };
  const customer = await findCustomer(deps.db, tenant, session.customerId);
  if (!customer) return 'unknown';
  try {
    await changeCustomer(deps, customer, completeBiometricsUpdate, [
      { sessionId: session.id, completedAt: deps.clock().toISOString() },
    ]);
  } catch (error) {
    // The workflow decides last: a session it no longer knows as live is over.
    if (error instanceof ProblemError && error.code === 'invalid_state') return 'expired';
    throw error;
  }
  return 'completed';
}
