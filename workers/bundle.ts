/**
 * The workflow bundle, built once with `bundleWorkflowCode` and cached under STACK_DIR, keyed by a
 * hash of the workflow sources and the locked SDK version. A worker start only reads the file.
 * Run directly (`npm run bundle-workflows`) to build it ahead of time, as the Dockerfile does.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PROJECT_ROOT, processConfig } from '../base/config';
import { createLogger, type Logger } from '../base/log';

const WORKFLOWS_PATH = path.join(PROJECT_ROOT, 'workflows', 'index.ts');
/** Folders whose files can reach the bundle (workflows import only shared names and types from core/). */
const SOURCE_FOLDERS = ['workflows', 'core', 'base'];

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = [
    ...(await Promise.all(SOURCE_FOLDERS.map((folder) => sourceFiles(path.join(PROJECT_ROOT, folder))))).flat(),
    path.join(PROJECT_ROOT, 'package-lock.json'),
  ];
  for (const file of files) {
    hash.update(path.relative(PROJECT_ROOT, file));
    hash.update(await readFile(file));
  }
  return hash.digest('hex').slice(0, 16);
}

export async function workflowBundlePath(stackDir: string, log: Logger): Promise<string> {
  const folder = path.join(stackDir, 'workflow-bundles');
  const target = path.join(folder, `bundle-${await sourceHash()}.js`);
  if (existsSync(target)) return target;
  const started = Date.now();
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger(log) });
  await mkdir(folder, { recursive: true });
  // Written aside then renamed, so a concurrent worker never reads half a file.
  const partial = `${target}.${process.pid}.tmp`;
  await writeFile(partial, code);
  await rename(partial, target);
  log.info('workflow bundle built', { path: target, ms: Date.now() - started });
  return target;
}

function quietLogger(log: Logger) {
  const forward = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) =>
    log[level](message, meta);
  return {
    log: (level: string, message: string, meta?: Record<string, unknown>) => log.debug(message, { ...meta, level }),
    trace: forward('debug'),
    debug: forward('debug'),
    info: forward('debug'),
    warn: forward('warn'),
    error: forward('error'),
  };
}

if (require.main === module) {
  const config = processConfig();
  const log = createLogger(config.logLevel, { component: 'bundle' });
  workflowBundlePath(config.stackDir, log).then(
    (file) => log.info('workflow bundle ready', { path: file }),
    (error: unknown) => {
      log.error('workflow bundle failed', { error });
      process.exit(1);
    },
  );
}
