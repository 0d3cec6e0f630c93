import { createHmac } from 'node:crypto';
import type { KeyRing } from '../key-ring.js';
import { presentedMacMatches } from '../presented-mac.js';

/** What a checker decided on an approval, as the API checked it and the workflow receives it. */
export interface DecisionClaim {
  approvalId: string;
  decision: 'approve' | 'reject';
  checkerId: string;
}

/** Why a decision's proof does not hold (or that it does). */
export type ProofVerdict = 'proven' | 'missing' | 'malformed' | 'unknown_key' | 'mismatch';

/**
 * The API's proof that it decided (issue 37): `<key id>.<base64url HMAC-SHA256>` over the
 * approval, the decision and the checker, under APPROVAL_DECISION_KEYS — keys the API and the
 * worker hold and Temporal never sees. The API makes it only after its own checks (the checker
 * authenticated, holding the deciding role, not the maker nor the operator concerned); the
 * worker verifies it before anything of the decision runs. Whoever reaches Temporal's frontend
 * can send the workflow an Update, but cannot make this.
 */
export function proveDecision(keys: KeyRing, claim: DecisionClaim): string {
  return `${keys.current.id}.${mac(keys.current.secret, claim).toString('base64url')}`;
}

export function verifyDecision(keys: KeyRing, claim: DecisionClaim, proof: unknown): ProofVerdict {
  if (proof === undefined || proof === null || proof === '') return 'missing';
  if (typeof proof !== 'string') return 'malformed';
  const dot = proof.indexOf('.');
  if (dot <= 0) return 'malformed';
  const key = keys.find(proof.slice(0, dot));
  if (!key) return 'unknown_key';
  return presentedMacMatches(mac(key.secret, claim), proof.slice(dot + 1)) ? 'proven' : 'mismatch';
}

/** One unambiguous message per claim: a JSON array, under a label naming this purpose. */
const mac = (secret: Buffer, claim: DecisionClaim) =>
  createHmac('sha256', secret)
    .update(
      `approval-decision:v1\n${JSON.stringify([claim.approvalId, claim.decision, claim.checkerId])}`,
    )
    .digest();
