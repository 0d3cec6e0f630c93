import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../project-root.js';

/**
 * One request and its answer as a real run saw them, by operation: what the reference shows as
 * each operation's example. Recorded by the test stack (`RECORD_EXAMPLES`), chosen by
 * `npm run examples:record` (src/main/record-examples.ts), checked in as `partner.json`, and
 * validated against the document's schemas by Spectral (`npm run check`).
 */
export interface OperationExample {
  /** The JSON body as sent (absent: the operation takes none, or a multipart form). */
  request?: unknown;
  /** The success status answered, and its JSON body (absent: an empty or binary answer). */
  status: number;
  response?: unknown;
}

export type RecordedExchange = OperationExample & { operationId: string };

export const partnerExamplesFile = join(projectRoot, 'src', 'http', 'examples', 'partner.json');

/** The checked-in examples of the partner API, by operation id (none before the first record). */
export function partnerExamples(): Record<string, OperationExample> {
  try {
    return JSON.parse(readFileSync(partnerExamplesFile, 'utf8')) as Record<
      string,
      OperationExample
    >;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}
