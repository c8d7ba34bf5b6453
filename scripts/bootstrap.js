#!/usr/bin/env node
// The entry of `npm start`, `npm test`, `npm run test:unit`, `npm run admin` and `npm run mcp`. It runs before the dependencies exist, so it
// uses nothing but Node: it installs them when node_modules is missing or older than the lock file
// (`npm install`, which follows the lock: `npm ci` refuses locks without other platforms' optional packages),
// then hands over to the TypeScript entry point and passes signals on to it. npm runs it through a
// shell, and npm's SIGTERM goes to that shell, which dies of it without passing it on: so when the
// process that started us goes away, the entry point is told to stop as well.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const stampFile = path.join(root, 'node_modules', '.fetchplane-install');

function lockHash() {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    const full = path.join(root, file);
    if (fs.existsSync(full)) hash.update(fs.readFileSync(full));
  }
  return hash.digest('hex');
}

// `quiet`: stdout belongs to a protocol (the MCP server over stdio), so the install reports on stderr.
function ensureDependencies(quiet) {
  const wanted = lockHash();
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === wanted) return;
  (quiet ? console.error : console.log)(`[fetchplane] installing npm dependencies (npm install, as locked)`);
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: quiet ? ['ignore', 2, 2] : 'inherit',
  });
  if (result.status !== 0) {
    console.error('[fetchplane] npm could not install the dependencies; see the output above.');
    process.exit(result.status ?? 1);
  }
  fs.writeFileSync(stampFile, wanted);
}

// The process that started us (npm, a shell, a test): when it is gone, nobody is left to stop us.
const parent = process.ppid;

// Runs a child and passes SIGINT, SIGTERM and SIGHUP on to it; when the parent goes away (npm killed
// outright, a shell between npm and us killed by npm's SIGTERM), the child gets SIGTERM as well.
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit' });
    const forward = (signal) => () => child.kill(signal);
    const handlers = { SIGINT: forward('SIGINT'), SIGTERM: forward('SIGTERM'), SIGHUP: forward('SIGHUP') };
    for (const [signal, handler] of Object.entries(handlers)) process.on(signal, handler);
    let orphaned = false;
    const watch = setInterval(() => {
      if (orphaned || process.ppid === parent) return;
      orphaned = true;
      child.kill('SIGTERM');
    }, 1000);
    child.on('exit', (code, signal) => {
      clearInterval(watch);
      for (const [name, handler] of Object.entries(handlers)) process.off(name, handler);
      resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 15) : 1));
    });
  });
}

const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const tsx = (script, args = []) => run(process.execPath, ['--import', 'tsx', path.join(root, script), ...args]);

const UNIT_SPEC = 'test/unit/**/*.test.ts';

/**
 * The unit suites (test/unit: pure modules, no stack) run first, by themselves; then the suites that
 * need the stack, with the global fixture that starts it (test/setup/global.ts). Files given as
 * arguments go to the run they belong to; options go to both.
 */
async function runSuites(args, { stack = true } = {}) {
  const options = args.filter((arg) => arg.startsWith('-'));
  const files = args.filter((arg) => !arg.startsWith('-'));
  const isUnit = (file) => file.replace(/^\.\//, '').startsWith('test/unit/');
  const unitFiles = files.length > 0 ? files.filter(isUnit) : [UNIT_SPEC];
  const stackFiles = files.length > 0 ? files.filter((file) => !isUnit(file)) : ['test/**/*.test.ts'];
  if (unitFiles.length > 0) {
    console.log('[fetchplane] unit suites (no stack)');
    const code = await run(bin('mocha'), [...options, ...unitFiles]);
    if (code !== 0 || !stack) return code;
  }
  if (!stack || stackFiles.length === 0) return 0;
  console.log('[fetchplane] suites against the stack');
  return run(bin('mocha'), ['--require', 'test/setup/global.ts', '--ignore', UNIT_SPEC, ...options, ...stackFiles]);
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  ensureDependencies(command === 'mcp');
  switch (command) {
    case 'start':
      return tsx('scripts/start.ts', args);
    case 'admin':
      return tsx('scripts/admin.ts', args);
    case 'mcp':
      return tsx('api/mcp/stdio.ts', args);
    case 'test': {
      console.log('[fetchplane] type-checking');
      let code = await run(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
      if (code !== 0) return code;
      console.log('[fetchplane] linting');
      code = await run(bin('eslint'), ['.']);
      if (code !== 0) return code;
      code = await tsx('scripts/import-cycles.ts');
      if (code !== 0) return code;
      code = await tsx('scripts/edge-database-calls.ts');
      if (code !== 0) return code;
      return runSuites(args);
    }
    case 'test:unit':
      return runSuites(args.length > 0 ? args : [UNIT_SPEC], { stack: false });
    default:
      console.error(`usage: node scripts/bootstrap.js start|test|test:unit|admin|mcp [args]`);
      return 2;
  }
}

main().then((code) => process.exit(code));
