import type { Config } from '../config.js';
import { createLocalFileStore, type FileStore } from './file-store.js';
import { createS3FileStore } from './s3-file-store.js';

/** The file store the configuration names (`FILE_STORE`: `s3` by default, or `local`). */
export function createFileStore(settings: Config['fileStore']): FileStore {
  return settings.kind === 'local'
    ? createLocalFileStore(settings.dir)
    : createS3FileStore({
        endpoint: settings.endpoint,
        bucket: settings.bucket,
        region: settings.region,
        credentials: settings.credentials,
      });
}
