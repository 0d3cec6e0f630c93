import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Custom search attributes, registered on every Temporal server the project starts, so ops can
 * find a partner's, customer's or loan's workflows in the UI. Ids and statuses only: search
 * attributes are not encrypted, so they never hold personal data.
 */
export const searchAttributes = {
  PartnerId: defineSearchAttributeKey('PartnerId', 'KEYWORD'),
  Environment: defineSearchAttributeKey('Environment', 'KEYWORD'),
  CustomerId: defineSearchAttributeKey('CustomerId', 'KEYWORD'),
  LoanId: defineSearchAttributeKey('LoanId', 'KEYWORD'),
  EndpointId: defineSearchAttributeKey('EndpointId', 'KEYWORD'),
  EventId: defineSearchAttributeKey('EventId', 'KEYWORD'),
} as const;

export type SearchAttributeName = keyof typeof searchAttributes;

export const allSearchAttributeKeys = Object.values(searchAttributes);
