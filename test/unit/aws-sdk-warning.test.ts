import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/project-root.js';

/**
 * On Node.js 20 the AWS SDK printed, at every process's start, that its releases after January
 * 2027 require Node.js 22 (issue 42). A fresh process (the SDK warns once per process) makes the
 * file store's S3 client — no request is sent — and the test reads its stderr.
 */
let dir: string;
let probe: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aws-sdk-warning-'));
  probe = join(dir, 'probe.mts');
  const store = pathToFileURL(join(projectRoot, 'src/storage/s3-file-store.ts')).href;
  await writeFile(
    probe,
    `import { createS3FileStore } from ${JSON.stringify(store)};
const store = createS3FileStore({
  endpoint: 'http://127.0.0.1:9',
  bucket: 'unused',
  region: 'us-east-1',
  credentials: { accessKeyId: 'unused', secretAccessKey: 'unused' },
});
await store.client();
process.stdout.write('client made\\n');
`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function startWith(switchValue: string | undefined) {
  const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _, ...env } = process.env;
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', probe],
    {
      cwd: projectRoot,
      env: {
        ...env,
        ...(switchValue === undefined
          ? {}
          : { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: switchValue }),
      },
    },
  );
  expect(stdout).toBe('client made\n');
  return stderr;
}

describe("the AWS SDK's Node.js support warning", () => {
  it('is not printed when the service makes its S3 client', async () => {
    expect(await startWith(undefined)).not.toContain('NodeVersionSupportWarning');
  });

  it("is printed as the SDK decides when an operator set the switch otherwise (the probe's control)", async () => {
    const major = Number(process.versions.node.split('.')[0]);
    const stderr = await startWith('false');
    if (major < 22) expect(stderr).toContain('NodeVersionSupportWarning');
    else expect(stderr).not.toContain('NodeVersionSupportWarning');
  });
});
