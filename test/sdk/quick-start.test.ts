import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/project-root.js';
import { fakeCpf } from '../helpers/customers.js';
import { createPartner, type TestPartner } from '../helpers/partners.js';
import { startStack, type TestStack } from '../helpers/stack.js';

/* The SDK's quick start (sdk/typescript/examples/quick-start.ts), run as its README says. */
const example = fileURLToPath(
  new URL('../../sdk/typescript/examples/quick-start.ts', import.meta.url),
);
const run = promisify(execFile);
let stack: TestStack;
let partner: TestPartner;

beforeAll(async () => {
  // The example's review approves the customer; an automatic one would race it. The example
  // polls for the disbursement: 3 s rather than the default 30 s spares each run the wait.
  stack = await startStack({
    env: { SANDBOX_REVIEW_DELAY: '1h', SANDBOX_DISBURSEMENT_DELAY: '3s' },
  });
  partner = await createPartner(stack, 'SDK quick start');
});
afterAll(async () => {
  await stack?.stop();
});

const sandboxEnv = () => ({
  ...process.env,
  EMBEDDED_CREDIT_API_URL: stack.baseUrl,
  EMBEDDED_CREDIT_CLIENT_ID: partner.credentials.sandbox.client_id,
  EMBEDDED_CREDIT_CLIENT_SECRET: partner.credentials.sandbox.client_secret,
});

describe('the SDK quick start', () => {
  it('takes a new customer to a loan paid by Pix', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', example, fakeCpf({ notStartingWith9: true })],
      { env: sandboxEnv(), timeout: 50_000 },
    );
    expect(stdout).toMatch(/^ln_[0-9a-f]{32} finished: paid \d+ centavos by Pix\n$/);
  });

  it("runs the root README's snippet as written, against the SDK packed and installed as the README says", async () => {
    // The README's block under "The TypeScript SDK", unchanged.
    const readme = await readFile(join(projectRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('**The TypeScript SDK**'));
    const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(snippet).toContain("from '@embedded-credit/sdk'");

    // A project of a partner's: the tarball `npm pack` makes (its prepack builds dist/), unpacked
    // where `npm install` puts it; its dependencies resolve from this repository's node_modules.
    // The SDK is packed from a copy two levels down (its tsconfig extends ../../tsconfig.json), so
    // the build never rewrites sdk/typescript/dist under a test that runs its command.
    await mkdir(join(projectRoot, '.data'), { recursive: true });
    const scratch = await mkdtemp(join(projectRoot, '.data', 'readme-sdk-'));
    const copy = await mkdtemp(join(projectRoot, '.data', 'sdk-pack-'));
    try {
      for (const entry of [
        'src',
        'bin',
        'README.md',
        'package.json',
        'tsconfig.json',
        'tsconfig.build.json',
      ])
        await cp(join(projectRoot, 'sdk', 'typescript', entry), join(copy, entry), {
          recursive: true,
        });
      const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], {
        cwd: copy,
      });
      const [{ filename, files }] = JSON.parse(packed.stdout) as [
        { filename: string; files: { path: string }[] },
      ];
      expect(files.map((file) => file.path)).toEqual(
        expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'bin/embedded-credit.js']),
      );
      const installed = join(scratch, 'node_modules', '@embedded-credit');
      await mkdir(installed, { recursive: true });
      await run('tar', ['-xzf', join(scratch, filename), '-C', installed]);
      await run('mv', [join(installed, 'package'), join(installed, 'sdk')]);
      await writeFile(join(scratch, 'package.json'), '{ "type": "module" }\n');
      const program = join(scratch, 'quick-start.ts');
      await writeFile(program, snippet!);

      // Strict TypeScript, as a partner's project would have it, over the installed types.
      await writeFile(
        join(scratch, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noUncheckedIndexedAccess: true,
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            types: ['node'],
            typeRoots: [join(projectRoot, 'node_modules', '@types')],
            skipLibCheck: true,
            noEmit: true,
          },
          files: ['quick-start.ts'],
        }),
      );
      await run(
        process.execPath,
        [join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch],
        { cwd: scratch },
      ).catch((error: { stdout?: string }) => {
        throw new Error(`the README's snippet does not type-check:\n${error.stdout ?? ''}`);
      });

      const pdf = fileURLToPath(
        new URL('../../sdk/typescript/examples/document.pdf', import.meta.url),
      );
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', program, fakeCpf({ notStartingWith9: true }), pdf],
        { cwd: scratch, env: sandboxEnv(), timeout: 50_000 },
      );
      expect(stdout).toMatch(/^ln_[0-9a-f]{32} finished: paid \d+ centavos by Pix\n$/);
    } finally {
      await rm(scratch, { recursive: true, force: true });
      await rm(copy, { recursive: true, force: true });
    }
  }, 120_000);
});
