import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldErrorCatalogue } from '../../src/errors.js';
import { cpf } from '../../src/http/routes/customers/schema.js';
import { toFieldErrors } from '../../src/http/validate.js';

/** The field codes a schema's refusal of `value` reads as. */
const codesOf = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value);
  if (result.success) return [];
  return result.error.issues.flatMap((issue) => toFieldErrors('body', issue)).map((e) => e.code);
};

describe('field error codes: one name per kind of problem', () => {
  it('a bound is out_of_range whichever side, for numbers and dates alike', () => {
    const amount = z.object({ amount: z.int().min(100).max(1_000) });
    expect(codesOf(amount, { amount: 99 })).toEqual(['out_of_range']);
    expect(codesOf(amount, { amount: 1_001 })).toEqual(['out_of_range']);
    expect(codesOf(z.date().max(new Date(0)), new Date())).toEqual(['out_of_range']);
  });

  it('a length is too_long or too_short, for text and lists', () => {
    expect(codesOf(z.string().max(3), 'abcd')).toEqual(['too_long']);
    expect(codesOf(z.string().min(1), '')).toEqual(['too_short']);
    expect(codesOf(z.array(z.string()).max(1), ['a', 'b'])).toEqual(['too_long']);
  });

  it('names the rest: type, format, value, missing and unknown fields, and a check digit', () => {
    const body = z.strictObject({ n: z.int(), e: z.email(), kind: z.enum(['a', 'b']) });
    expect(codesOf(body, { n: 1.5, e: 'x', kind: 'c', extra: 1 }).sort()).toEqual(
      ['invalid_format', 'invalid_type', 'invalid_value', 'unknown_field'].sort(),
    );
    expect(codesOf(body, { e: 'a@b.co', kind: 'a' })).toEqual(['required']);
    expect(codesOf(cpf, '123.456.789-00')).toEqual(['invalid_format']);
  });

  it('reads a check without a code of the catalogue as invalid_value, never a made-up code', () => {
    expect(
      codesOf(
        z.string().refine(() => false),
        'x',
      ),
    ).toEqual(['invalid_value']);
    expect(
      codesOf(
        z.string().refine(() => false, { params: { code: 'not_in_catalogue' } }),
        'x',
      ),
    ).toEqual(['invalid_value']);
    expect(
      codesOf(
        z.string().refine(() => false, { params: { code: 'duplicate' } }),
        'x',
      ),
    ).toEqual(['duplicate']);
    for (const code of ['out_of_range', 'too_long', 'invalid_value', 'duplicate'])
      expect(fieldErrorCatalogue).toHaveProperty(code);
  });
});
