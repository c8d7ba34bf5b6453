import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers',
  'tls', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib',
];

/**
 * Layering: routes validate, call a core command and present; they never touch the database. So nothing
 * under api/ imports the MongoDB driver or a store module; the database handle's type (base/db) may be
 * named, to hand it to core's commands. The process entry points (api/main.ts, api/mcp/stdio.ts) open
 * the database for those commands and may import base/db for that.
 */
const storeModules = [
  { group: ['mongodb', 'mongodb/*'], message: 'api/ makes no database call: add a command or query in core/ and call it.' },
  { regex: '(^|/)store$', message: 'api/ reads no store: add a command or query in core/ and call it.' },
];
const databaseHandle = { regex: '(^|/)base/db$', allowTypeImports: true, message: 'api/ opens no database: take the handle from ApiDeps and pass it to a core command.' };
/** Stores core keeps behind its own commands (their types may be named). scripts/api-database-calls.ts checks every call besides. */
const coreStores = { regex: '(^|/)core/mcp/sessions$', allowTypeImports: true, message: 'api/ opens no store: call the commands of core/mcp/commands.ts.' };

const processEnv = { object: 'process', property: 'env', message: 'Only base/config.ts reads the environment: take a Config (or childEnvironment for a child process).' };

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
    // One typed config module reads the environment (base/config.ts); everything else receives a Config.
    files: ['**/*.ts'],
    ignores: ['base/config.ts'],
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
    files: ['api/**/*.ts'],
    ignores: ['api/main.ts', 'api/mcp/stdio.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...storeModules, databaseHandle, coreStores] }] },
  },
  {
    files: ['api/main.ts', 'api/mcp/stdio.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: storeModules }] },
  },
  {
    // The worker and its activities run core and engine code only: the HTTP layer is the API process's.
    files: ['activities/**/*.ts', 'workers/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+api(/|$)', message: 'workers/ and activities/ import nothing from api/: move what they need into core/ or engine/.' }] }],
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
            { group: ['../base/db', '../base/temporal', '../base/config', '../activities/*', '!../activities'], message: 'Import activities as types only; no I/O modules in workflows.' },
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
