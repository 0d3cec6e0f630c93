import type { Context } from 'koa';
import type { StoredFile } from '../storage/file-store.js';

/**
 * Streams a stored file as the response, with its media type and length: the bytes go from the
 * store to the client without being held in memory. Private: never cached on the way.
 */
export function sendFile(
  ctx: Context,
  file: StoredFile,
  contentType: string,
  disposition: string,
): void {
  ctx.type = contentType;
  ctx.length = file.size;
  ctx.set('Content-Disposition', disposition);
  ctx.set('Cache-Control', 'private, no-store');
  ctx.body = file.body;
}
