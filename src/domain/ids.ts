import { randomBytes } from 'node:crypto';

/** Every public id is `{prefix}_{32 lowercase hex}` (contract §1). */
export const idPrefixes = {
  partner: 'ptn',
  credential: 'cred',
  client: 'cli',
  smokeCheck: 'smk',
  customer: 'cust',
  document: 'doc',
  biometricSession: 'bio',
  event: 'evt',
  webhookEndpoint: 'we',
  webhookDelivery: 'whd',
  creditOffer: 'co',
  simulation: 'sim',
  loan: 'ln',
  loanTransaction: 'txn',
  refund: 'rfd',
  charge: 'chg',
  operator: 'op',
  operatorToken: 'opt',
  operatorEnrollment: 'enr',
  auditEntry: 'aud',
  approval: 'apr',
  payout: 'pyt',
  customerDataKey: 'cdk',
  reminder: 'rmd',
  agreementSimulation: 'ags',
  agreement: 'agr',
  assignment: 'asg',
} as const;

export type IdPrefix = (typeof idPrefixes)[keyof typeof idPrefixes];

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}
