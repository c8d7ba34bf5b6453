import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import fetchplane from './scripts/lint/regexp-from-input.mjs';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers',
  'tls', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib',
];

/**
 * Layering: routes validate, call a core command and present; they never touch the database. So nothing
 * under api/ imports the MongoDB driver or a store module; the database handle's type (core/db) may be
 * named, to hand it to core's commands. The process entry points (api/main.ts, api/mcp/stdio.ts) open
 * the database for those commands and may import core/db for that.
 */
const storeModules = [
  { group: ['mongodb', 'mongodb/*'], message: 'api/ makes no database call: add a command or query in core/ and call it.' },
  { regex: '(^|/)store$', message: 'api/ reads no store: add a command or query in core/ and call it.' },
];
const databaseHandle = { regex: '(^|/)core/db$', allowTypeImports: true, message: 'api/ opens no database: take the handle from ApiDeps and pass it to a core command.' };
/** Stores core keeps behind its own commands (their types may be named). scripts/api-database-calls.ts checks every call besides. */
const coreStores = { regex: '(^|/)core/mcp/sessions$', allowTypeImports: true, message: 'api/ opens no store: call the commands of core/mcp/commands.ts.' };

/**
 * Regular expressions built at run time, each read and found harmless: what goes into the pattern is a
 * constant of the code or escaped, and what is left cannot backtrack. Any other is an error
 * (scripts/lint/regexp-from-input.mjs): match without a regular expression, or review it and add it here.
 */
const reviewedRegExps = [
  { file: 'core/jobs/cursor.ts', within: 'wholeNumber', why: 'the digit count is a number the code passes, never input' },
  { file: 'engine/extract/induce-list.ts', within: 'fromClasses', why: 'the class prefix is escaped; one fixed separator and one (.+)$ follow it' },
  { file: 'engine/extract/recipe.ts', within: 'urlMatches', why: 'patterns come from urlPatterns (engine/extract/induce.ts): escaped path segments and [^/]+ between literal slashes' },
  { file: 'engine/outputs/extract/contacts.ts', within: 'EMAIL_EXACT', why: 'the source of a constant pattern of the module, anchored' },
  { file: 'scripts/stack/proc.ts', within: 'field', why: 'field names are constants of the module' },
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
    // No regular expression built from input (a hostile robots.txt rule once froze the API): see reviewedRegExps.
    files: ['api/**/*.ts', 'core/**/*.ts', 'engine/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'workers/**/*.ts', 'scripts/**/*.ts'],
    plugins: { fetchplane },
    rules: { 'fetchplane/regexp-from-input': ['error', { root: import.meta.dirname, reviewed: reviewedRegExps }] },
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
