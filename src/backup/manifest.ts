import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * What a backup folder holds, written last: a folder without it is an interrupted backup, and
 * the restore refuses it. Checksums cover every file the restore reads.
 */
export const MANIFEST_FILE = 'manifest.json';
export const OBJECTS_FOLDER = 'objects';
export const OBJECTS_LIST = 'objects.sha256';
export const MANIFEST_FORMAT = 'embedded-credit-backup/1';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const instant = z.iso.datetime();

export const databasePartSchema = z.object({
  /** Which database: the application's, or Temporal's two. */
  part: z.enum(['application', 'temporal', 'temporal_visibility']),
  file: z.string().regex(/^[a-z_]+\.dump$/),
  database: z.string().min(1),
  /** `server_version_num` of the server dumped. */
  serverVersion: z.number().int().positive(),
  /** pg_dump's snapshot is taken when it starts: the state this part holds. */
  startedAt: instant,
  finishedAt: instant,
  bytes: z.number().int().nonnegative(),
  sha256,
});
export type DatabasePart = z.infer<typeof databasePartSchema>;

export const manifestSchema = z.object({
  format: z.literal(MANIFEST_FORMAT),
  startedAt: instant,
  finishedAt: instant,
  service: z.object({
    version: z.string(),
    /** The newest migration this release ships. */
    latestMigration: z.string(),
    /** The newest applied to the database dumped (journal time; its tag when known). */
    databaseMigration: z.object({
      createdAt: z.number().int().nullable(),
      tag: z.string().nullable(),
    }),
  }),
  tools: z.object({ pgDump: z.string(), mc: z.string() }),
  /** In the order they were taken: Temporal's first, then the application's. */
  databases: z.array(databasePartSchema).min(1),
  /** Why Temporal's databases are absent, when they are (the dev server keeps SQLite). */
  temporalNotIncluded: z.string().optional(),
  objectStore: z.object({
    bucket: z.string().min(1),
    startedAt: instant,
    finishedAt: instant,
    objects: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    /** `objects.sha256`'s own hash: it lists each object's. */
    listSha256: sha256,
  }),
});
export type Manifest = z.infer<typeof manifestSchema>;

export async function readManifest(folder: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch {
    throw new Error(
      `${join(folder, MANIFEST_FILE)} is missing: not a backup, or one that did not finish (the manifest is written last)`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${MANIFEST_FILE} is not JSON`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `${MANIFEST_FILE} is not a manifest this version reads:\n${parsed.error.issues
        .map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('\n')}`,
    );
  return parsed.data;
}
