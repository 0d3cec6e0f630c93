// @ts-check
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Workflow code is replayed by Temporal and must be deterministic: no Node built-ins, no I/O,
// no direct activity imports (only `import type`). The same rules as Temporal's own samples.
const nodeBuiltins = builtinModules.flatMap((name) => [name, `node:${name}`]);

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'sdk/typescript/dist/',
      '.data/',
      'drizzle/',
      'coverage/',
      // Generated from the PSP's documents (npm run psp:generate); psp:check keeps them current.
      'src/psp/bcb/api.ts',
      'src/psp/payouts/api.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code is deterministic: no Node built-ins (use activities for I/O).',
          })),
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              allowTypeImports: true,
              message:
                'Import activities with `import type` and call them through proxyActivities.',
            },
            {
              group: [
                'postgres',
                'drizzle-orm',
                'drizzle-orm/*',
                'koa',
                '@koa/*',
                'pino',
                '@temporalio/client',
                '@temporalio/worker',
                '**/db/**',
                '**/http/**',
              ],
              message: 'Workflow code is deterministic: no I/O libraries.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Workflow code is deterministic: no process access.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow in a loop.' },
        { name: 'fetch', message: 'Workflow code is deterministic: do I/O in an activity.' },
      ],
    },
  },
  {
    // Test doubles are often async without awaiting anything: that is their point.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    files: ['src/main/**/*.ts', 'src/devstack/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['*.js', '*.config.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
);
