import type { CustomerStatus, KycState } from './kyc.js';
import { kycChanged } from './kyc.js';

export interface CustomerRef {
  id: string;
  external_id: string | null;
}

export interface PendingEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * The catalogue events a change implies, in the order a partner should read them: the KYC array
 * first (`customer.kyc_updated`), then the status event the change reached.
 */
export function customerEvents(
  customer: CustomerRef,
  before: KycState,
  after: KycState,
  deniedReason?: string,
): PendingEvent[] {
  const base = { id: customer.id, external_id: customer.external_id };
  const out: PendingEvent[] = [];
  if (kycChanged(before.kyc, after.kyc)) {
    out.push({
      type: 'customer.kyc_updated',
      data: { ...base, status: after.status, kyc: after.kyc },
    });
  }
  if (before.status !== after.status) {
    const statusEvent = statusEvents[after.status];
    if (statusEvent) {
      out.push({
        type: statusEvent,
        data: {
          ...base,
          status: after.status,
          ...(after.status === 'denied' ? { reason: deniedReason ?? null } : {}),
        },
      });
    }
  }
  return out;
}

// Returning to pending_kyc has no event of its own: customer.kyc_updated carries the new status.
const statusEvents: Partial<Record<CustomerStatus, string>> = {
  under_review: 'customer.under_review',
  active: 'customer.active',
  denied: 'customer.denied',
};
