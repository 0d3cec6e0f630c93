import { z } from 'zod';

/**
 * What no text a partner sends may hold: NUL, which PostgreSQL's text and jsonb refuse, and
 * unpaired UTF-16 surrogates, which are not Unicode (JSON can spell them as `\ud800`). The request
 * validation refuses both in every query, body and multipart field (422, `invalid_text`), and the
 * OpenAPI document gives every free-text request string this pattern. Unpaired surrogates need no
 * pattern: a JSON Schema string is a sequence of Unicode characters, which they are not.
 */
export const TEXT_PATTERN = '^[^\\x00]*$';

const unpairedSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isValidText = (value: string): boolean =>
  !value.includes('\0') && !unpairedSurrogate.test(value);

/** What `trim()` removes (ECMA-262 WhiteSpace and LineTerminator), spelled out: other regex
 * engines' `\s` differ (Python's takes \x1c–\x1f and leaves \ufeff). */
const SPACE =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * Text that is trimmed and must not be blank. `maxLength` counts what was sent; the pattern (in
 * the document only) asks for a character that is not white space, which is what `min(1)` after
 * the trim checks.
 */
export const trimmedText = (max: number) =>
  z
    .string()
    .max(max)
    .trim()
    .min(1)
    .meta({ pattern: `^[${SPACE}]*[^${SPACE}\\x00][^\\x00]*$` });
