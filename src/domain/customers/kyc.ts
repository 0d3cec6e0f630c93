/**
 * KYC rules: which items a customer owes, how each moves, and the customer status that follows.
 * Pure and deterministic — the onboarding workflow runs these, so no I/O, clocks or randomness.
 *
 * Item moves: pending → submitted (upload, biometrics, correction); submitted → approved |
 * pending_resubmission (document rejected) | pending_correction (data rejected);
 * pending_resubmission → submitted; pending_correction → submitted (PATCH of the field).
 */

export const customerStatuses = ['pending_kyc', 'under_review', 'active', 'denied'] as const;
export type CustomerStatus = (typeof customerStatuses)[number];

export const kycItemStatuses = [
  'pending',
  'submitted',
  'approved',
  'pending_resubmission',
  'pending_correction',
] as const;
export type KycItemStatus = (typeof kycItemStatuses)[number];

export interface KycItem {
  kind: 'document' | 'data';
  type: string;
  description: string;
  status: KycItemStatus;
  message: string | null;
  uploaded_at: string | null;
}

export interface KycState {
  status: CustomerStatus;
  kyc: KycItem[];
}

export interface CreditAnalysis {
  status: 'approved' | 'rejected' | 'manual_review_required';
  /** Pre-approved limit in centavos, when approved. */
  approved_limit_amount: number | null;
  /** The longest term ops approved (a decision's; the sandbox's comes from its table). */
  max_installments?: number | null;
  decided_at: string;
  reason: string | null;
}

export const documentTypes = {
  identity_card_front: 'Identity card, front',
  identity_card_back: 'Identity card, back',
  cnh: 'Driver licence (CNH)',
  selfie: 'Selfie',
  biometrics: 'Biometric capture',
  ccmei: 'MEI certificate (CCMEI)',
} as const;
export type DocumentType = keyof typeof documentTypes;

/** Customer fields a reviewer may ask to correct; each becomes a `data` item named after the field. */
export const correctableFields = {
  email: 'E-mail address',
  phone: 'Phone number',
  name: 'Name',
  trading_name: 'Trading name',
} as const;
export type CorrectableField = keyof typeof correctableFields;

export type ReviewDecision = 'approve' | 'reject' | 'request_correction';
export interface ReviewItem {
  type: string;
  decision: ReviewDecision;
  message?: string | undefined;
}

export class KycRuleError extends Error {
  constructor(
    /** `unknown_type`: not an item of this customer (422); `invalid_state`: the item or customer forbids it (409). */
    readonly code: 'unknown_type' | 'invalid_state',
    message: string,
  ) {
    super(message);
    this.name = 'KycRuleError';
  }
}

const open: KycItemStatus[] = ['pending', 'pending_resubmission'];

const documentItem = (type: DocumentType): KycItem => ({
  kind: 'document',
  type,
  description: documentTypes[type],
  status: 'pending',
  message: null,
  uploaded_at: null,
});

/** What a new customer owes: identity card (front and back), selfie, biometrics; with a CNPJ, the CCMEI. */
export function initialKyc(hasCnpj: boolean): KycItem[] {
  const types: DocumentType[] = [
    'identity_card_front',
    'identity_card_back',
    'selfie',
    'biometrics',
  ];
  if (hasCnpj) types.push('ccmei');
  return types.map(documentItem);
}

/** The status the items imply. `denied` is final; `active` needs every item approved. */
export function deriveStatus(current: CustomerStatus, kyc: KycItem[]): CustomerStatus {
  if (current === 'denied') return 'denied';
  if (kyc.length > 0 && kyc.every((item) => item.status === 'approved')) return 'active';
  if (kyc.every((item) => item.status === 'submitted' || item.status === 'approved'))
    return 'under_review';
  return 'pending_kyc';
}

function assertNotFinal(state: KycState): void {
  if (state.status === 'denied') throw new KycRuleError('invalid_state', 'The customer is denied.');
  if (state.status === 'active')
    throw new KycRuleError('invalid_state', 'The customer is active: KYC is complete.');
}

function withStatus(state: KycState, kyc: KycItem[]): KycState {
  return { kyc, status: deriveStatus(state.status, kyc) };
}

/**
 * A document (or the biometric capture) was submitted. A `cnh` stands in for both identity-card
 * items while neither has been submitted.
 */
export function submitDocument(state: KycState, type: string, at: string): KycState {
  assertNotFinal(state);
  let kyc = state.kyc;
  if (type === 'cnh' && !kyc.some((item) => item.type === 'cnh')) {
    const cards = kyc.filter(
      (item) => item.type === 'identity_card_front' || item.type === 'identity_card_back',
    );
    if (cards.length === 0)
      throw new KycRuleError('unknown_type', 'cnh is not a KYC item of this customer.');
    if (!cards.every((item) => open.includes(item.status))) {
      throw new KycRuleError(
        'invalid_state',
        'An identity card was already submitted; a CNH can no longer replace it.',
      );
    }
    const position = kyc.indexOf(cards[0]!);
    kyc = kyc.filter((item) => !cards.includes(item));
    kyc.splice(position, 0, documentItem('cnh'));
  }
  const item = kyc.find((candidate) => candidate.kind === 'document' && candidate.type === type);
  if (!item) throw new KycRuleError('unknown_type', `${type} is not a KYC item of this customer.`);
  if (!open.includes(item.status)) {
    throw new KycRuleError(
      'invalid_state',
      `The ${type} item is ${item.status}; only pending or pending_resubmission items take uploads.`,
    );
  }
  return withStatus(
    state,
    kyc.map((candidate) =>
      candidate === item
        ? { ...item, status: 'submitted', message: null, uploaded_at: at }
        : candidate,
    ),
  );
}

/**
 * Changed customer fields: their `pending_correction` items go back to review. Once KYC is done
 * (`active`) a change touches no item; a denied customer changes no more.
 */
export function correctData(state: KycState, fields: string[], at: string): KycState {
  if (state.status === 'denied') throw new KycRuleError('invalid_state', 'The customer is denied.');
  const kyc = state.kyc.map((item) =>
    item.kind === 'data' && item.status === 'pending_correction' && fields.includes(item.type)
      ? { ...item, status: 'submitted' as const, message: null, uploaded_at: at }
      : item,
  );
  return withStatus(state, kyc);
}

/**
 * The customer's CNPJ was set or removed: a company owes the CCMEI, an individual does not. Only
 * before KYC is complete — an active customer's company would need a KYC of its own.
 */
export function setCompany(state: KycState, hasCnpj: boolean): KycState {
  if (state.status === 'denied') throw new KycRuleError('invalid_state', 'The customer is denied.');
  const ccmei = state.kyc.find((item) => item.type === 'ccmei');
  if (hasCnpj === Boolean(ccmei)) return state;
  if (state.status === 'active') {
    throw new KycRuleError('invalid_state', 'The cnpj cannot change once the customer is active.');
  }
  const kyc = hasCnpj
    ? [...state.kyc, documentItem('ccmei')]
    : state.kyc.filter((item) => item !== ccmei);
  return withStatus(state, kyc);
}

/** Review decisions on submitted items; `request_correction` opens a data item for a field. */
export function review(state: KycState, decisions: ReviewItem[]): KycState {
  assertNotFinal(state);
  const kyc = [...state.kyc];
  for (const { type, decision, message } of decisions) {
    if (decision === 'request_correction') {
      if (!(type in correctableFields)) {
        throw new KycRuleError(
          'unknown_type',
          `${type} is not a correctable field (${Object.keys(correctableFields).join(', ')}).`,
        );
      }
      const correction: KycItem = {
        kind: 'data',
        type,
        description: correctableFields[type as CorrectableField],
        status: 'pending_correction',
        message: message ?? `Please correct the ${type}.`,
        uploaded_at: null,
      };
      const existing = kyc.findIndex((item) => item.kind === 'data' && item.type === type);
      if (existing >= 0) kyc[existing] = { ...correction, uploaded_at: kyc[existing]!.uploaded_at };
      else kyc.push(correction);
      continue;
    }
    const index = kyc.findIndex((item) => item.type === type);
    const item = kyc[index];
    if (!item)
      throw new KycRuleError('unknown_type', `${type} is not a KYC item of this customer.`);
    if (item.status !== 'submitted') {
      throw new KycRuleError(
        'invalid_state',
        `The ${type} item is ${item.status}; only submitted items can be reviewed.`,
      );
    }
    kyc[index] =
      decision === 'approve'
        ? { ...item, status: 'approved', message: null }
        : {
            ...item,
            status: item.kind === 'document' ? 'pending_resubmission' : 'pending_correction',
            message:
              message ??
              (item.kind === 'document'
                ? 'The document was rejected; please upload it again.'
                : `Please correct the ${type}.`),
          };
  }
  return withStatus(state, kyc);
}

export function deny(state: KycState): KycState {
  if (state.status === 'denied')
    throw new KycRuleError('invalid_state', 'The customer is already denied.');
  return { ...state, status: 'denied' };
}

/** Whether two KYC arrays differ in anything a partner sees. */
export function kycChanged(before: KycItem[], after: KycItem[]): boolean {
  return JSON.stringify(before) !== JSON.stringify(after);
}
