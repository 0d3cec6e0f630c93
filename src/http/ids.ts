import { z } from 'zod';
import type { ErrorCode } from '../errors.js';

/** The prefixes of ids a partner can send back to us, in paths and as cursors. */
type PublicPrefix =
  | 'cred'
  | 'cli'
  | 'cust'
  | 'doc'
  | 'co'
  | 'sim'
  | 'evt'
  | 'we'
  | 'whd'
  | 'smk'
  | 'ln'
  | 'txn'
  | 'chg'
  | 'op'
  | 'aud'
  | 'apr'
  | 'ags'
  | 'agr'
  | 'asg';
type NotFoundCode = ErrorCode & `${string}_not_found`;

/** `{prefix}_{32 lowercase hex}` (contract §1), anchored. */
export const idPattern = (prefix: PublicPrefix) => new RegExp(`^${prefix}_[0-9a-f]{32}$`);
const example = (prefix: PublicPrefix) => `${prefix}_0a1b2c3d4e5f60718293a4b5c6d7e8f9`;

/** What each prefix names, for the document's descriptions. */
const nouns: Record<PublicPrefix, string> = {
  cred: 'credential',
  cli: 'credential (its client id)',
  cust: 'customer',
  doc: 'document',
  co: 'credit offer',
  sim: 'simulation',
  evt: 'event',
  we: 'webhook endpoint',
  whd: 'webhook delivery',
  smk: 'smoke check',
  ln: 'loan',
  txn: 'loan transaction',
  chg: 'charge',
  op: 'operator',
  aud: 'audit entry',
  apr: 'approval',
  ags: 'agreement simulation',
  agr: 'agreement',
  asg: 'assignment',
};
const described = (prefix: PublicPrefix) => ({
  example: example(prefix),
  description: `The ${nouns[prefix]}'s id (\`${prefix}_\` and 32 hex digits).`,
});

const notFoundCodes = new WeakMap<z.ZodType, NotFoundCode>();

/**
 * A path id. Its pattern is in the document, and a path id of another shape is answered by the
 * router as the resource's 404 (contract §1) before any handler or query sees it.
 */
export function pathId(prefix: PublicPrefix, notFound: NotFoundCode) {
  const schema = z.string().regex(idPattern(prefix)).meta(described(prefix));
  notFoundCodes.set(schema, notFound);
  return schema;
}

/** The 404 code of a path parameter made by {@link pathId}. */
export const notFoundCodeOf = (schema: unknown): NotFoundCode | undefined =>
  schema instanceof z.ZodType ? notFoundCodes.get(schema) : undefined;

/** An id in a body or a response. */
export const idField = (prefix: PublicPrefix) =>
  z.string().regex(idPattern(prefix)).meta(described(prefix));
