import ms, { type StringValue } from 'ms';
import { z } from 'zod';
import { pathId } from '../../ids.js';

const MAX_DELAY_MS = ms('90d');

export const createSmokeCheckBody = z
  .strictObject({
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
            params: { code: 'invalid_format' },
            message: 'Expected a duration from 0s to 90d, such as 30s or 30d.',
          });
          return z.NEVER;
        }
        return parsed;
      })
      .meta({
        description:
          'A durable timer the workflow waits on before completing, e.g. "30s" or "30d".',
      }),
  })
  .meta({ id: 'CreateSmokeCheckRequest' });

export const smokeCheckSchema = z
  .object({
    id: z.string(),
    status: z.enum(['pending', 'completed']),
    delay_ms: z.int(),
    workflow_id: z.string(),
    completed_by: z
      .string()
      .nullable()
      .meta({ description: 'Worker identity (pid@host) that completed it.' }),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'SmokeCheck' });

export const smokeCheckParams = z.object({ id: pathId('smk', 'smoke_check_not_found') });
