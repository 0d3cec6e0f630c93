import { uuid4 } from '@temporalio/workflow';
import type { IdPrefix } from '../src/domain/ids.js';

/**
 * A public id (`{prefix}_{32 hex}`, contract §1) drawn inside a workflow: from the workflow's seeded
 * random, so a replay draws the same ids and an activity retried with them writes nothing twice.
 * Each call is one draw: keep the order of calls stable across code versions.
 */
export const hexId = (prefix: IdPrefix): string => `${prefix}_${uuid4().replaceAll('-', '')}`;

/** The ids of every event booking a Pix may write (`PixEventIds`), drawn in one fixed order. */
export const pixEventIds = () => ({
  payment: hexId('evt'),
  finished: hexId('evt'),
  cancelled: hexId('evt'),
  refundDue: hexId('evt'),
  chargePaid: hexId('evt'),
  chargeCancelled: hexId('evt'),
});
