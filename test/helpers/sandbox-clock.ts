import { expect } from 'vitest';
import { eventually } from './eventually.js';
import { json, type Client } from './partners.js';

/**
 * Moves a sandbox customer's clock to `to` (contract §12) and waits until everything it moves has
 * caught up (the clock reads `ready`).
 */
export async function advanceSandboxClock(
  api: Client,
  customerId: string,
  to: Date | number,
): Promise<void> {
  const moved = await api(`/v3/sandbox/customers/${customerId}/clock`, {
    method: 'POST',
    body: { advance_to: new Date(to).toISOString() },
  });
  expect(moved.status).toBe(202);
  await eventually(
    async () => {
      const clock = await json<{ status: string }>(
        api(`/v3/sandbox/customers/${customerId}/clock`),
      );
      return clock.status === 'ready' ? clock : undefined;
    },
    `the clock of ${customerId} to be ready`,
    60_000,
  );
}
