/** Workflow ids name the record they own, so starting one twice is harmless (REJECT_DUPLICATE). */
export const workflowIds = {
  smokeCheck: (smokeCheckId: string) => `smoke-check/${smokeCheckId}`,
  customerOnboarding: (customerId: string) => `customer-onboarding/${customerId}`,
  webhookDelivery: (deliveryId: string) => `webhook-delivery/${deliveryId}`,
};
