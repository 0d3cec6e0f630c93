import type { Environment } from '../../src/domain/environments.js';

/** The contract of a delivery workflow (`webhook-delivery/{whd_id}`): its input. */
export interface DeliveryWorkflowInput {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  partnerId: string;
  environment: Environment;
}
