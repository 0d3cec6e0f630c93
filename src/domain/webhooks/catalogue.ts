/** Every event the service emits (the spec's catalogue); endpoint filters are checked against it. */
export const eventCatalogue = [
  'customer.created',
  'customer.under_review',
  'customer.kyc_updated',
  'customer.active',
  'customer.denied',
  'customer.erased',
  'credit_offer.available',
  'credit_offer.expired',
  'credit_offer.accepted',
  'credit_offer.cancelled',
  'loan.created',
  'loan.signature_received',
  'loan.processing',
  'loan.active',
  'loan.payment_received',
  'loan.installment_overdue',
  'loan.finished',
  'loan.cancelled',
  'loan.error',
  'loan.refund_due',
  'loan.refund_sent',
  'loan.written_off',
  'loan.assigned',
  'loan.agreement_created',
  'loan.agreement_accepted',
  'loan.agreement_active',
  'loan.agreement_lapsed',
  'loan.agreement_broken',
  'loan.agreement_fulfilled',
  'charge.created',
  'charge.paid',
  'charge.expired',
  'charge.cancelled',
  'installment.reminder',
] as const;

export type EventType = (typeof eventCatalogue)[number];

const resources = new Set(eventCatalogue.map((name) => name.split('.')[0]));

/** An exact event name or a resource wildcard such as `loan.*`. */
export function isEventFilter(filter: string): boolean {
  if (filter.endsWith('.*')) return resources.has(filter.slice(0, -2));
  return (eventCatalogue as readonly string[]).includes(filter);
}

/** Whether an endpoint with these filters takes this event; no filters means every event. */
export function filtersMatch(filters: string[], eventType: string): boolean {
  if (filters.length === 0) return true;
  return filters.some((filter) =>
    filter.endsWith('.*') ? eventType.startsWith(filter.slice(0, -1)) : filter === eventType,
  );
}
