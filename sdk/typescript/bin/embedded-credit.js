#!/usr/bin/env node
// The package's command. Runs the build (dist/) when there is one; inside the repository, before
// `npm run sdk:build`, the TypeScript source through tsx (a development dependency of the root).
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const built = new URL('../dist/cli.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { tsImport } = await import('tsx/esm/api');
  await tsImport('../src/cli.ts', import.meta.url);
}
