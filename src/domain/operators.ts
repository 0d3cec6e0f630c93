/**
 * The service's staff (contract §15): each operator is named, holds roles, and is the actor of
 * what they do. `OPS_TOKEN` is the break-glass administrator: every role, its own actor id, and
 * in staff administration only the start of the first two administrators (issue 37).
 * `workflow_viewer` reads workflow payloads decoded (the Temporal UI's codec endpoint): personal
 * data leaves encryption there, so it is a role of its own, which no other role implies.
 * `metrics_reader` is Prometheus's: an operator holding it and no other role reads `/metrics`
 * and nothing else (every other route answers 403), so the scrape's token, kept in a file on the
 * monitoring host, opens no customer's record.
 */
export const operatorRoles = [
  'kyc_reviewer',
  'disbursement',
  'payments',
  'admin',
  'workflow_viewer',
  'metrics_reader',
] as const;
export type OperatorRole = (typeof operatorRoles)[number];

/** Who did something: recorded on the records, transactions and events an ops command touches. */
export interface Actor {
  type: 'operator' | 'partner' | 'system';
  id: string;
}

export const BREAK_GLASS_ID = 'break_glass';

/** Who moved money by hand, and who approved it (dual control); both absent: the system did. */
export interface Actors {
  actor?: Actor | undefined;
  approvedBy?: Actor | undefined;
}

/** An authenticated member of staff. */
export interface Operator {
  actor: Actor & { type: 'operator' };
  roles: readonly OperatorRole[];
}

export const breakGlass: Operator = {
  actor: { type: 'operator', id: BREAK_GLASS_ID },
  roles: operatorRoles,
};

export const hasRole = (operator: Operator, roles: readonly OperatorRole[]) =>
  roles.some((role) => operator.roles.includes(role));

/** Prometheus's operator: `metrics_reader` and no other role, so `/metrics` only. */
export const readsMetricsOnly = (operator: Operator) =>
  operator.roles.length > 0 && operator.roles.every((role) => role === 'metrics_reader');

/** The break-glass token's operator (`OPS_TOKEN`): every role, but limited where people matter. */
export const isBreakGlass = (operator: Operator) => operator.actor.id === BREAK_GLASS_ID;

/**
 * While fewer administrators than this can act, the break-glass token may start one (issue 37):
 * dual control needs two, and before there are two there is nobody to approve the second.
 */
export const BOOTSTRAP_ADMINISTRATORS = 2;
