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
 * under api/ imports the MongoDB driver or a store module; the database handle's type (base/db) may be
 * named, to hand it to core's commands. The process entry points (api/main.ts, api/mcp/stdio.ts) open
 * the database for those commands and may import base/db for that.
 */
const storeModules = [
  { group: ['mongodb', 'mongodb/*'], message: 'api/ makes no database call: add a command or query in core/ and call it.' },
  { regex: '(^|/)store$', message: 'api/ reads no store: add a command or query in core/ and call it.' },
];
const databaseHandle = { regex: '(^|/)base/db$', allowTypeImports: true, message: 'api/ opens no database: take the handle from ApiDeps and pass it to a core command.' };
/** Stores core keeps behind its own commands (their types may be named). scripts/edge-database-calls.ts checks every call besides. */
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

const processEnv = { object: 'process', property: 'env', message: 'Only base/config.ts reads the environment: take a Config (or childEnvironment for a child process).' };

/**
 * The floors, each importing only the ones below it (README, "Floors"):
 *   base/      configuration, errors, log, metrics, clock, ids, the database and Temporal connections
 *   engine/    retrieval, browser, outputs, extraction: imports base/ only; the domain hands it interfaces
 *   core/      the domain (accounts, jobs, crawls, Batch, Extract): imports engine/ and base/
 *   api/, activities/   the edges that call the domain; then workflows/ and workers/ on top
 * Type imports count too: a floor that names a type of a floor above it depends on that floor.
 */
const above = (floors, message) => ({ regex: `^(\\.\\./)+(${floors.join('|')})(/|$)`, message });
/** What workflows may import as values from core/: names and pure types shared with the activities. */
const coreFloor = above(['api', 'activities', 'workflows', 'workers', 'scripts'], 'core/ is the domain: the edges (api/, activities/) call it, never the other way round; shared names live in core/.');
const SHARED_WITH_WORKFLOWS = ['jobs/workflow-names', 'jobs/retry-rules', 'batch/run-types', 'crawls/types'];

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
    files: ['api/**/*.ts', 'base/**/*.ts', 'core/**/*.ts', 'engine/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'workers/**/*.ts', 'scripts/**/*.ts'],
    plugins: { fetchplane },
    rules: { 'fetchplane/regexp-from-input': ['error', { root: import.meta.dirname, reviewed: reviewedRegExps }] },
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
    files: ['base/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [above(['engine', 'core', 'api', 'activities', 'workflows', 'workers', 'scripts'], 'base/ is the ground floor: it imports nothing of the floors above it.')] }] },
  },
  {
    files: ['engine/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [above(['core', 'api', 'activities', 'workflows', 'workers', 'scripts'], 'engine/ stands on base/ only: take what the domain knows as an interface handed in (see engine/service.ts FetchStores).')] }] },
  },
  {
    files: ['core/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [coreFloor] }] },
  },
  {
    // What workflows take as values from core/ is pure: it names things and holds types, importing no module's values.
    files: SHARED_WITH_WORKFLOWS.map((name) => `core/${name}.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [coreFloor, { regex: '^\\.', allowTypeImports: true, message: 'A module shared with the workflows imports only types (it is bundled into the workflow sandbox).' }] },
      ],
    },
  },
  {
    // Activities are as thin as routes: they open no collection and reach no store; core's commands do.
    files: ['activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            // Types may be named (what a workflow passes in); scripts/edge-database-calls.ts catches every call.
            { group: ['mongodb', 'mongodb/*'], allowTypeImports: true, message: 'activities/ make no database call: call a command of core/.' },
            { regex: '(^|/)store$', allowTypeImports: true, message: 'activities/ read no store: call a command of core/.' },
            { regex: '(^|/)base/db$', allowTypeImports: true, message: 'activities/ open no database: call a command of core/.' },
            { regex: '^(\\.\\./)+api(/|$)', message: 'workers/ and activities/ import nothing from api/: move what they need into core/ or engine/.' },
          ],
        },
      ],
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
    // The worker runs core and engine code only: the HTTP layer is the API process's.
    files: ['workers/**/*.ts'],
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
            { group: ['../activities/*', '!../activities', '../api/*', '../workers/*'], message: 'Workflows import activities as types only, and no I/O modules.' },
          ],
        },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^\\.\\./core/(?!(${SHARED_WITH_WORKFLOWS.join('|')})$)`,
              allowTypeImports: true,
              message: `Workflows take only shared names and types from core/ as values (${SHARED_WITH_WORKFLOWS.join(', ')}); anything else as a type.`,
            },
            { regex: '^\\.\\./(base|engine)(/|$)', allowTypeImports: true, message: 'Workflows import nothing of base/ or engine/ but types.' },
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
