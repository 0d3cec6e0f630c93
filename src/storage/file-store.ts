import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';

/** Where uploaded files live. The local folder is the default; an object store can implement this. */
export interface FileStore {
  /** Stores the bytes under `key`; once this resolves the file is durable. */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes stored under `key`; undefined when there are none. */
  read(key: string): Promise<Buffer | undefined>;
  /** Removes a file; a missing one is not an error. */
  delete(key: string): Promise<void>;
}

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
    async read(key) {
      try {
        return await readFile(pathOf(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
