import { readFile, rm } from 'node:fs/promises';
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

export const UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

const parse = koaBody({
  multipart: true,
  json: false,
  urlencoded: false,
  text: false,
  patchKoa: true,
  parsedMethods: [HttpMethodEnum.POST],
  formidable: {
    maxFiles: 1,
    maxFileSize: UPLOAD_LIMIT_BYTES,
    maxTotalFileSize: UPLOAD_LIMIT_BYTES,
    maxFields: 10,
    maxFieldsSize: 64 * 1024,
    allowEmptyFiles: false,
    minFileSize: 1,
  },
  onError: (error) => {
    throw error;
  },
});

// formidable's codes for a file over the limit and for more files than allowed.
const tooLarge = new Set([1009, 1016]);

/** An uploaded file, read into memory (at most 10 MiB) and its temporary copy removed. */
export interface Upload {
  fileName: string;
  bytes: Buffer;
}

/**
 * `multipart/form-data` with at most one file, under `file`. The fields and the file (read into
 * memory) land together on `ctx.request.body`, so validation reports a missing file beside any
 * bad field; formidable's temporary file never outlives the request.
 */
export const multipartBody: Middleware<AppState> = async (ctx, next) => {
  if (!ctx.is('multipart/form-data')) throw problems.unsupportedMediaType(['multipart/form-data']);
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > UPLOAD_LIMIT_BYTES + 64 * 1024) throw problems.payloadTooLarge('10 MiB');
  try {
    await parse(ctx, async () => {});
  } catch (error) {
    const code =
      typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
    if (tooLarge.has(code as number)) throw problems.payloadTooLarge('10 MiB');
    throw problems.validation([
      { path: 'body', code: 'unreadable', message: 'The multipart body could not be read.' },
    ]);
  }
  const files = ctx.request.files ?? {};
  const temporary = Object.values(files).flatMap((entry) =>
    Array.isArray(entry) ? entry : [entry],
  );
  try {
    const fields = (ctx.request.body ?? {}) as Record<string, unknown>;
    const file = files.file;
    const upload: Upload | undefined =
      file && !Array.isArray(file)
        ? { fileName: file.originalFilename ?? 'upload', bytes: await readFile(file.filepath) }
        : undefined;
    (ctx.request as { body?: unknown }).body = { ...fields, ...(upload ? { file: upload } : {}) };
  } finally {
    await Promise.all(temporary.map((entry) => rm(entry.filepath, { force: true })));
  }
  await next();
};
