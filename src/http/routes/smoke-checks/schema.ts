import ms, { type StringValue } from 'ms';
import { z } from 'zod';
import { idPattern } from '../../../domain/ids.js';

const MAX_DELAY_MS = ms('90d');

export const createSmokeCheckBody = z.strictObject({
  delay: z
    .string()
    .default('0s')
    .transform((value, ctx) => {
      const parsed = ms(value as StringValue);
      if (
        typeof parsed !== 'number' ||
        !Number.isFinite(parsed) ||
        parsed < 0 ||
        parsed > MAX_DELAY_MS
      ) {
        ctx.addIssue({
          code: 'custom',
          message: 'Expected a duration from 0s to 90d, such as 30s or 30d.',
        });
        return z.NEVER;
      }
      return parsed;
    })
    .describe('A durable timer the workflow waits on before completing, e.g. "30s" or "30d".'),
});

export const smokeCheckParams = z.strictObject({
  id: z.string().regex(idPattern('smk')),
});
