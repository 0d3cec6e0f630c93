import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';

/** A stored file opened for reading: its bytes as a stream, and how many there are. */
export interface StoredFile {
  body: Readable;
  size: number;
}

/** A stored file as a listing shows it. */
export interface StoredKey {
  key: string;
  lastModified: Date;
}

/**
 * Where uploaded KYC documents and contract PDFs live: an S3-compatible object store
 * (`s3-file-store.ts`) in every environment, or a local folder as an explicit option. Keys carry
 * ids only, never personal data.
 */
export interface FileStore {
  /**
   * Stores the bytes under `key`, checked against their SHA-256 (hex) by the store; once this
   * resolves the file is durable.
   */
  put(key: string, bytes: Buffer, sha256: string): Promise<void>;
  /** The file stored under `key`, as a stream; undefined when there is none. */
  open(key: string): Promise<StoredFile | undefined>;
  /** Removes a file; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Every stored key, in pages (the orphan sweeper's walk). */
  list(): AsyncIterable<StoredKey[]>;
}

/**
 * The store could not be reached or did not answer in time: the request that needed it is a 503
 * with Retry-After (the problem handler knows this code), and nothing is half-recorded.
 */
export class FileStoreUnavailableError extends Error {
  readonly code = 'FILE_STORE_UNAVAILABLE';
  constructor(operation: string, cause: unknown) {
    super(
      `file store ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'FileStoreUnavailableError';
  }
}

/** The local folder store (`FILE_STORE=local`): one machine only, for development by choice. */
export function createLocalFileStore(root: string): FileStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(join(base, key));
    if (!path.startsWith(base + sep)) throw new Error(`storage key escapes the store: ${key}`);
    return path;
  };
  return {
    async put(key, bytes) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // Written aside and renamed: a crash never leaves a half-written file under the real key.
      const partial = `${path}.partial`;
      await writeFile(partial, bytes, { flush: true });
      await rename(partial, path);
    },
    async open(key) {
      const path = pathOf(key);
      try {
        const { size } = await stat(path);
        return { body: createReadStream(path), size };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async *list() {
      let entries;
      try {
        entries = await readdir(base, { recursive: true, withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      const files: StoredKey[] = [];
      for (const entry of entries) {
        if (!entry.isFile() || entry.name.endsWith('.partial')) continue;
        const path = join(entry.parentPath, entry.name);
        files.push({
          key: relative(base, path).split(sep).join('/'),
          lastModified: (await stat(path)).mtime,
        });
      }
      yield files;
    },
  };
}
