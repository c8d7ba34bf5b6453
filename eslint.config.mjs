import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers',
  'tls', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib',
];

const processEnv = { object: 'process', property: 'env', message: 'Only core/config.ts reads the environment: take a Config (or childEnvironment for a child process).' };

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', '.stack/**', 'dist/**', 'scripts/bootstrap.js', 'scripts/ferretdb/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // One typed config module reads the environment (core/config.ts); everything else receives a Config.
    files: ['**/*.ts'],
    ignores: ['core/config.ts'],
    rules: {
      'no-restricted-properties': ['error', processEnv],
    },
  },
  {
    // The engine's one facade (engine/index.ts): the API, the activities and the worker stay off its inner modules.
    files: ['api/**/*.ts', 'activities/**/*.ts', 'workers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/engine/*'], message: 'Import the fetch engine through engine/index.ts.' }] }],
    },
  },
  {
    // Workflow code must stay deterministic: no Node built-ins, no I/O clients, no wall clock.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.flatMap((name) => [name, `node:${name}`]),
            'mongodb', 'undici', 'playwright-core', 'koa', '@koa/router', '@temporalio/client', '@temporalio/worker',
            '@temporalio/activity',
          ].map((name) => ({ name, message: 'Workflows must stay deterministic: do I/O in activities.' })),
          patterns: [
            { group: ['node:*'], message: 'Workflows must not import Node built-ins.' },
            { group: ['../core/db', '../core/temporal', '../core/config', '../activities/*', '!../activities'], message: 'Import activities as types only; no I/O modules in workflows.' },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        processEnv,
        { object: 'Date', property: 'now', message: 'Use workflow time (the sandbox), not Date.now(), and never in logic that must replay.' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports' }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
  },
);
