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
import {
  checkVerificationCode,
  sendVerificationCode,
  type CodeCheckOutcome,
  type CodeRequestOutcome,
  type VerificationDeps,
} from './verification.js';

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

/** An open session and its customer: what the page's code and completion act on. */
async function openSessionOf(deps: CustomerDeps, token: string) {
  const session = await findSessionByTokenHash(deps.db, hashToken(token));
  const view = viewOf(session, deps.clock());
  if (!session || view !== 'open') return { view: view === 'open' ? 'unknown' : view } as const;
  const tenant = { partnerId: session.partnerId, environment: session.environment };
  const customer = await findCustomer(deps.db, tenant, session.customerId);
  if (!customer) return { view: 'unknown' } as const;
  return { view, session, customer, tenant } as const;
}

export type BiometricsCodeOutcome =
  { kind: 'closed'; view: CompletionOutcome } | CodeRequestOutcome;

/**
 * Before the capture counts, a code sent to the customer's e-mail on record proves the person
 * at the page is the customer (contract §15: biometrics get the signing page's treatment).
 */
export async function requestBiometricsCode(
  deps: CustomerDeps & VerificationDeps,
  token: string,
  requestedIp: string | null,
): Promise<BiometricsCodeOutcome> {
  const open = await openSessionOf(deps, token);
  if (open.view !== 'open') return { kind: 'closed', view: open.view };
  const { session, customer, tenant } = open;
  return sendVerificationCode(
    deps,
    tenant,
    { purpose: 'biometrics', subjectId: session.id, person: customer.id },
    {
      email: customer.email,
      message: (code) => ({
        subject: 'Seu código para concluir a verificação biométrica',
        text: [
          `Olá, ${customer.name}.`,
          '',
          `Seu código para concluir a captura biométrica é ${code}. Ele vale por 10 minutos.`,
          '',
          'Não compartilhe este código com ninguém. Se você não pediu este código, ignore este e-mail.',
        ].join('\n'),
      }),
    },
    { requestedIp },
  );
}

export type BiometricsCompletion =
  { kind: 'closed'; view: CompletionOutcome } | Exclude<CodeCheckOutcome, { kind: 'verified' }>;

/**
 * The customer finished the capture on the hosted page and typed the code sent to them: the
 * biometrics item becomes submitted. Without a right code nothing is recorded.
 */
export async function completeBiometrics(
  deps: CustomerDeps & VerificationDeps,
  token: string,
  proof: {
    codeId: string;
    code: string;
    evidence: { ipAddress: string | null; userAgent: string | null };
  },
): Promise<BiometricsCompletion> {
  const open = await openSessionOf(deps, token);
  if (open.view !== 'open') return { kind: 'closed', view: open.view };
  const { session, customer } = open;
  const checked = await checkVerificationCode(deps, {
    codeId: proof.codeId,
    purpose: 'biometrics',
    subjectId: session.id,
    presented: proof.code,
    sandbox: session.environment === 'sandbox',
    evidence: proof.evidence,
  });
  if (checked.kind !== 'verified') return checked;
  try {
    await changeCustomer(deps, customer, completeBiometricsUpdate, [
      { sessionId: session.id, completedAt: deps.clock().toISOString() },
    ]);
  } catch (error) {
    // The workflow decides last: a session it no longer knows as live is over.
    if (error instanceof ProblemError && error.code === 'invalid_state')
      return { kind: 'closed', view: 'expired' };
    throw error;
  }
  return { kind: 'closed', view: 'completed' };
}
