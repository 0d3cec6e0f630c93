/**
 * Every error the API answers with is an RFC 9457 problem with a stable `code`. The catalogue is
 * the single source for statuses, titles and meanings; `/docs/errors` is rendered from it.
 */
export const errorCatalogue = {
  invalid_json: {
    status: 400,
    title: 'Invalid JSON',
    meaning: 'The request body is not parseable JSON.',
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid Cursor',
    meaning: '`starting_after` names no record of this list.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    meaning: 'No bearer token, or one that is malformed, unsigned or badly signed.',
  },
  unsupported_grant_type: {
    status: 400,
    title: 'Unsupported Grant Type',
    meaning: 'The token exchange accepts only `grant_type=client_credentials`.',
  },
  token_expired: {
    status: 401,
    title: 'Token Expired',
    meaning:
      'The bearer token is past its expiry (one hour after issue); exchange the credential again.',
  },
  token_revoked: {
    status: 401,
    title: 'Token Revoked',
    meaning: 'The credential that issued this token has been revoked.',
  },
  invalid_client: {
    status: 401,
    title: 'Invalid Client',
    meaning: 'Unknown `client_id`, wrong `client_secret`, or a revoked credential.',
  },
  credential_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No credential with the client id in this environment.',
  },
  route_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No route matches the method and path.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method Not Allowed',
    meaning: 'The path exists but not with this method; `Allow` lists the methods it takes.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload Too Large',
    meaning: 'A JSON body over 1 MiB or an upload over 10 MiB.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported Media Type',
    meaning: 'The request `Content-Type` is not one this operation accepts.',
  },
  customer_already_exists: {
    status: 409,
    title: 'Conflict',
    meaning: 'A customer with this cpf/cnpj exists with a different `external_id`.',
  },
  operator_role_required: {
    status: 403,
    title: 'Operator Role Required',
    meaning:
      'The operator is authenticated but holds none of the roles this ops command needs; `detail` names them.',
  },
  operator_not_found: {
    status: 404,
    title: 'Operator Not Found',
    meaning: 'No operator with this id.',
  },
  approval_not_found: {
    status: 404,
    title: 'Approval Not Found',
    meaning: 'No approval with this id.',
  },
  approval_by_maker: {
    status: 403,
    title: 'Approval By Maker',
    meaning:
      'The operator who asked for a money movement or a staff change cannot approve or reject it: dual control needs another operator.',
  },
  break_glass_limited: {
    status: 403,
    title: 'Break-Glass Token Limited',
    meaning:
      'The break-glass token (`OPS_TOKEN`) starts administrators only while fewer than two can act, and never decides an approval nor administers staff otherwise: an administrator asks, another approves.',
  },
  self_administration: {
    status: 403,
    title: 'Self Administration',
    meaning:
      'Nobody changes their own roles or asks or decides staff administration about themselves (your own token you rotate yourself).',
  },
  operator_already_exists: {
    status: 409,
    title: 'Operator Already Exists',
    meaning: 'An operator with this e-mail exists.',
  },
  invalid_state: {
    status: 409,
    title: 'Conflict',
    meaning:
      "The record's state forbids this action — its status, a KYC item the customer does not owe, an `Idempotency-Key` used for another operation; `detail` says which.",
  },
  idempotency_key_in_use: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A request with the same `Idempotency-Key` is still being processed; retry after it finishes.',
  },
  credential_limit_reached: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The partner already holds `MAX_CREDENTIALS_PER_PARTNER` live credentials (both environments together); revoke one before creating another.',
  },
  validation_error: {
    status: 422,
    title: 'Validation Error',
    meaning: 'One or more fields are invalid; `errors[]` has one entry per bad field.',
  },
  rate_limited: {
    status: 429,
    title: 'Too Many Requests',
    meaning: 'Rate limit exceeded; see `Retry-After`.',
  },
  internal_error: {
    status: 500,
    title: 'Internal Server Error',
    meaning: 'An unexpected error. It has been logged with the request id; retrying may help.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service Unavailable',
    meaning:
      'The database or the workflow engine is unreachable; retry after `Retry-After` seconds.',
  },
  psp_refused: {
    status: 502,
    title: 'PSP Refused',
    meaning:
      'The lender’s PSP refused to register a production charge (its answer is in `detail`); nothing was written, and the same request would be refused again. Report it with the request id.',
  },
  psp_unavailable: {
    status: 503,
    title: 'PSP Unavailable',
    meaning:
      'The lender’s PSP could not be reached or did not answer in time, so a production charge could not be registered there; nothing was written. Retry after `Retry-After` seconds.',
  },
  customer_not_found: { status: 404, title: 'Not Found', meaning: 'No customer with the id.' },
  customer_erased: {
    status: 410,
    title: 'Gone',
    meaning:
      'The customer was erased (LGPD art. 18) at `erased_at`: its personal data is gone; its loans, if any, can still be read.',
  },
  erasure_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'The customer has not been erased.',
  },
  document_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No document with the id for this customer.',
  },
  webhook_endpoint_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No webhook endpoint with the id.',
  },
  delivery_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No delivery with the id for this endpoint.',
  },
  event_not_found: { status: 404, title: 'Not Found', meaning: 'No event with the id.' },
  credit_offer_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No credit offer with the id.',
  },
  simulation_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No simulation with the id for this credit offer.',
  },
  credit_offer_unavailable: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The credit offer is not `available` (accepted, expired or cancelled); `detail` names its status.',
  },
  simulation_expired: {
    status: 409,
    title: 'Conflict',
    meaning: 'The simulation is past its `valid_until`; simulate again.',
  },
  loan_not_found: { status: 404, title: 'Not Found', meaning: 'No loan with the id.' },
  payment_reference_conflict: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A payment with this `reference` was recorded on the loan with another amount or `paid_at`: a reference names one payment for good. The same payment sent again answers 200 and records nothing.',
  },
  unsupported_file_type: {
    status: 415,
    title: 'Unsupported File Type',
    meaning: 'The uploaded file is not a PDF, JPEG or PNG (judged by its content, not its name).',
  },
  charge_not_found: { status: 404, title: 'Not Found', meaning: 'No charge with the id.' },
  // Payment agreements (contract §17; docs/agreements.md).
  agreement_not_found: { status: 404, title: 'Not Found', meaning: 'No agreement with the id.' },
  agreement_simulation_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No agreement simulation with the id for this loan.',
  },
  agreement_exists: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The loan has a live agreement (`pending_acceptance`, `pending_entry` or `active`): one at a time; `detail` names it.',
  },
  // Refinancing (contract §17; docs/refinancing.md).
  refinanced_loan_not_active: {
    status: 409,
    title: 'Conflict',
    meaning: 'A loan in `refinances` is not `active`: only an active loan is refinanced.',
  },
  refinanced_loan_written_off: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A loan in `refinances` was written off: its principal left the book; an agreement or a payment settles it.',
  },
  loan_already_being_refinanced: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A loan in `refinances` is named by another live loan (awaiting signatures or processing); `detail` names it.',
  },
  refinanced_loan_in_agreement: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A loan in `refinances` has a live payment agreement (`pending_acceptance`, `pending_entry` or `active`): the agreement settles it, or it ends first.',
  },
  refinancing_changed: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A refinanced loan’s payoff is not what the simulation priced (a payment since, or a simulation not made for these loans): simulate again.',
  },
  refinancing_not_covered: {
    status: 422,
    title: 'Refinancing Not Covered',
    meaning:
      'The simulation’s requested amount is less than the payoff of the loans it refinances on its release date; `detail` names each payoff. Simulate again.',
  },
  pix_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No Pix received with this end-to-end id.',
  },
  scr_not_configured: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The SCR 3040 cannot be exported: `SCR_INSTITUTION_CNPJ`, `SCR_RESPONSIBLE_NAME`, `SCR_RESPONSIBLE_EMAIL` or `SCR_RESPONSIBLE_PHONE` is unset (development only; production does not start without them).',
  },
  psp_not_configured: {
    status: 409,
    title: 'Conflict',
    meaning:
      'Money cannot leave by the PSP’s API: no PSP is configured (`PSP_API_URL` unset, development only). Record a refund sent by hand instead.',
  },
  smoke_check_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No smoke check with the id.',
  },
  reconciliation_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'The reconciliation of the date has never run (run it: `POST …/{date}/run`).',
  },
  // Assignments (contract §19, docs/assignments.md).
  assignment_not_found: {
    status: 404,
    title: 'Not Found',
    meaning: 'No assignment (batch of loans sold) with the id.',
  },
  assignment_not_due: {
    status: 409,
    title: 'Conflict',
    meaning:
      'An assignment is settled on its settlement date only (São Paulo): not before; after it, cancel it and price a new one.',
  },
  assignment_loans_changed: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A loan of the assignment changed since it was priced (a payment reached it): its settlement would sell other rows than those priced; cancel it and price a new one. `detail` names the loan.',
  },
  assignment_price_received: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The buyer’s payment of the assignment’s price was recorded already, under another `reference` (`detail` names it): a price is received once. The same payment sent again answers 200 and records nothing.',
  },
  remittance_day_open: {
    status: 409,
    title: 'Conflict',
    meaning:
      'A day’s remittance to an assignment’s buyer is paid once the day is over (São Paulo): money may still come in until then.',
  },
  remittance_paid: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The day’s remittance to the assignment’s buyer was paid already, under another `reference` (`detail` names it): a day is remitted once. The same payment sent again answers 200 and records nothing.',
  },
  nothing_to_remit: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The assignment’s loans collected nothing for its buyer that day (the remittances report’s `total` is 0 or less): there is nothing to pay.',
  },
  loan_assigned: {
    status: 409,
    title: 'Conflict',
    meaning:
      'The loan was sold (contract §19: `assigned_to`): what changes its debt, such as a payment agreement, is its buyer’s to agree.',
  },
} as const satisfies Record<string, { status: number; title: string; meaning: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/**
 * The codes of a `validation_error`'s `errors[]`, one name per kind of problem (`/docs/errors`
 * lists them): a partner's code can branch on `code` and show `message`.
 */
export const fieldErrorCatalogue = {
  required: 'The field is missing.',
  unknown_field:
    'The field is not part of the request schema (a typo, or a field of another request).',
  invalid_type:
    'The value has the wrong JSON type: a string where a number goes, a fraction where an integer goes.',
  invalid_format:
    'The text does not have the field’s format: a pattern, an e-mail, a URL, a date, an id, a cpf or cnpj (check digits included), a pix key, a header’s syntax.',
  invalid_value:
    'The value is not one the field takes: not in its list (an enum), or not the literal it must be.',
  invalid_text: 'The text holds a NUL character or an unpaired UTF-16 surrogate.',
  out_of_range:
    'A number or a date outside the bounds allowed: the field’s own, the offer’s (amount, installments), the customer’s clock (dates). `message` names the bounds.',
  too_long: 'Text or a list longer than the field allows.',
  too_short:
    'Text or a list shorter than the field allows (an empty string where text is required).',
  duplicate:
    'The same value twice where each must differ (two signers with one cpf, a role twice).',
  immutable: 'A field that cannot change after creation (a customer’s `cpf`, `external_id`).',
  nothing_to_change: 'An update that names no field to change.',
  unreadable:
    'The body could not be read as the content type it declares (a broken multipart form).',
  forbidden_target:
    'A webhook URL the service will not deliver to: an address that is not public, localhost, a port not allowed.',
  customer_cpf: 'The customer’s own cpf among the extra signers: the customer signs already.',
  not_a_signer: 'The cpf does not sign this loan.',
  in_the_future: 'A payment dated later than now (the customer’s clock in the sandbox).',
  before_disbursement: 'A payment dated before the loan’s disbursement.',
  before_latest_payment: 'A payment dated before the loan’s latest payment.',
  above_payoff_amount:
    'More than the payoff amount of the day: `message` says how much pays everything.',
  not_the_amount_due:
    'Not the amount the installment asks for (the sandbox’s exact-amount helper).',
  above_refund_due: 'A refund larger than what the loan owes back to the borrower.',
  above_returnable:
    'A refund by devolução larger than the loan’s Pix can return (each at most what it brought, less its earlier devoluções): `message` says how much can.',
  duplicate_refinanced_loan: 'A loan listed twice in `refinances`.',
  too_many_refinanced_loans: 'More loans in `refinances` than one loan refinances (5).',
  nothing_overdue:
    'A charge, or an agreement, for the overdue installments of a loan with none overdue.',
  duplicate_offset:
    'Two steps of a reminder schedule on the same day (`offset_days`): each step needs its own.',
  duplicate_channel: 'A channel named twice in one reminder step.',
  discount_above_charges:
    'An agreement’s discount larger than the interest and late charges in its debt: a discount never reaches principal; `message` says how much it can be.',
  not_a_production_loan:
    'A Pix the PSP received matched to a loan that is not production’s, or that never took money.',
  month_not_ended:
    'An SCR 3040 of the current month or a later one (São Paulo): a month is reported once its last day is over.',
  loan_not_assignable:
    'A loan an assignment cannot sell: unknown, a sandbox loan, not active, its disbursement not confirmed, written off, in a live agreement or refinancing, or in another live assignment; `message` says which.',
  not_the_price:
    'A buyer’s payment of an assignment’s price that is not the whole price: `message` says the price.',
  codec_failed:
    'A workflow payload the codec could not decode (ops: an unknown key id, a destroyed customer key, a failed tag).',
} as const;

export type FieldErrorCode = keyof typeof fieldErrorCatalogue;

export interface FieldError {
  /** JSON-pointer-like path of the field, e.g. `body.email` or `query.limit`. */
  path: string;
  code: FieldErrorCode;
  message: string;
}

export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.status = errorCatalogue[code].status;
    this.title = errorCatalogue[code].title;
  }
}

export const problems = {
  routeNotFound: (method: string, path: string) =>
    new ProblemError('route_not_found', `No route for ${method} ${path}.`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ProblemError(
      'method_not_allowed',
      `${method} is not allowed here; use ${allowed.join(', ')}.`,
      {},
      { Allow: allowed.join(', ') },
    ),
  invalidJson: (reason: string) =>
    new ProblemError('invalid_json', `The body is not valid JSON: ${reason}`),
  payloadTooLarge: (limit: string) =>
    new ProblemError(
      'payload_too_large',
      `The body is larger than the ${limit} this operation accepts.`,
    ),
  unsupportedMediaType: (accepted: string[]) =>
    new ProblemError('unsupported_media_type', `Send the body as ${accepted.join(' or ')}.`),
  validation: (errors: FieldError[]) =>
    new ProblemError(
      'validation_error',
      errors.length === 1 ? '1 field is invalid.' : `${errors.length} fields are invalid.`,
      { errors },
    ),
  unauthorized: (detail = 'Send a valid bearer token in the Authorization header.') =>
    new ProblemError('unauthorized', detail, {}, { 'WWW-Authenticate': 'Bearer' }),
  roleRequired: (roles: readonly string[]) =>
    new ProblemError(
      'operator_role_required',
      `This command needs one of these roles: ${roles.join(', ')}.`,
      { roles },
    ),
  notFound: (code: ErrorCode & `${string}_not_found`, detail: string) =>
    new ProblemError(code, detail),
  tokenExpired: () =>
    new ProblemError(
      'token_expired',
      'The bearer token has expired; exchange your credential for a new one.',
      {},
      { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    ),
  tokenRevoked: () =>
    new ProblemError(
      'token_revoked',
      'The credential that issued this token has been revoked.',
      {},
      { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    ),
  /** OAuth 2.0 clients read `error`, so the token endpoint's problems carry it too (RFC 6749 §5.2). */
  invalidClient: () =>
    new ProblemError(
      'invalid_client',
      'Client authentication failed: unknown client_id, wrong client_secret or revoked credential.',
      { error: 'invalid_client' },
      { 'WWW-Authenticate': 'Basic realm="embedded-credit"' },
    ),
  unsupportedGrantType: () =>
    new ProblemError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.', {
      error: 'unsupported_grant_type',
    }),
  rateLimited: (retryAfterSeconds: number) =>
    new ProblemError(
      'rate_limited',
      `Too many requests; retry in ${retryAfterSeconds} s.`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  invalidCursor: (id: string) =>
    new ProblemError('invalid_cursor', `starting_after=${id} names no record of this list.`),
  idempotencyKeyInUse: () =>
    new ProblemError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed; retry once it has finished.',
      {},
      { 'Retry-After': '1' },
    ),
  credentialLimitReached: (limit: number) =>
    new ProblemError(
      'credential_limit_reached',
      `This partner already holds ${limit} live credentials, the most allowed across sandbox and production; revoke one (DELETE /v3/auth/credentials/{client_id}) before creating another.`,
    ),
  serviceUnavailable: (detail: string, extra: Record<string, unknown> = {}) =>
    new ProblemError('service_unavailable', detail, extra, { 'Retry-After': '5' }),
  internal: () =>
    new ProblemError(
      'internal_error',
      'An unexpected error occurred. Quote the request id when reporting it.',
    ),
};

export function problemBody(problem: ProblemError, publicBaseUrl: string) {
  return {
    type: `${publicBaseUrl}/docs/errors#${problem.code}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    ...problem.extra,
  };
}
