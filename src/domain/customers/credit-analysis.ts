import type { Environment } from '../environments.js';
import type { CreditAnalysis } from './kyc.js';

/**
 * The credit analysis that starts at registration. In the sandbox it is deterministic from the
 * CPF: a CPF whose first digit is 9 is rejected (no offer); others get a limit from R$ 5,000 to
 * R$ 49,000 read off the CPF's digits, so partners can predict their test data. Production has no
 * credit bureau integrated yet: its customers wait for a manual decision rather than get an
 * invented one.
 */
export function creditAnalysisFor(input: {
  cpf: string;
  environment: Environment;
  at: Date;
}): CreditAnalysis {
  const decided_at = input.at.toISOString();
  if (input.environment === 'production') {
    return {
      status: 'manual_review_required',
      approved_limit_amount: null,
      decided_at,
      reason: 'No credit bureau is integrated yet.',
    };
  }
  if (input.cpf.startsWith('9')) {
    return {
      status: 'rejected',
      approved_limit_amount: null,
      decided_at,
      reason: 'Sandbox: CPF starting with 9.',
    };
  }
  const steps = Number(input.cpf.slice(1, 3)) % 45; // 0–44
  return {
    status: 'approved',
    approved_limit_amount: (5_000 + steps * 1_000) * 100,
    decided_at,
    reason: null,
  };
}
