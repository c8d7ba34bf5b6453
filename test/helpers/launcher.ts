/**
 * `npm start` run as an operator runs it: its own process group, its own data folder, ports nothing
 * else can take (0: the launcher picks), its output collected. For the launcher's own tests.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnvironment, PROJECT_ROOT } from '../../base/config';
import { alive, processTree } from '../../scripts/stack/proc';
import type { ComponentName } from '../../scripts/stack/stack';
import { eventually } from './stack';

export interface Launcher {
  child: ChildProcess;
  dataDir: string;
  /** Everything the launcher printed so far. */
  output(): string;
  /** The API's URL, from the launcher's "API:" line. */
  api: string;
  /** The pid the launcher recorded for a component (its pid file), if it runs. */
  pidOf(name: ComponentName): number | undefined;
  /** A new account's API key, made with `npm run admin` against the launcher's FerretDB. */
  createKey(): Promise<string>;
  /** Whether any process is left in its process group. */
  groupAlive(): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ends whatever is left (a failed test) and removes the data folder. */
  close(): Promise<void>;
}

/** What a test does to the data folder around the launcher's life (mount a small disk in it, and unmount it). */
export interface DataFolderHooks {
  /** Before the launcher starts, on the empty folder. */
  prepare?(dataDir: string): void;
  /** After every process is gone, before the folder is removed. */
  release?(dataDir: string): void;
}

/** Starts `npm start` and waits until its output matches `until` (by default: it is ready). */
export async function startLauncher(env: Record<string, string> = {}, until = /Press Ctrl-C to stop/, hooks: DataFolderHooks = {}): Promise<Launcher> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-launcher-'));
  try {
    hooks.prepare?.(dataDir);
  } catch (error) {
    hooks.release?.(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const child = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    detached: true, // a process group of its own, as a terminal gives it
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnvironment({
      DATA_DIR: dataDir,
      PORT: '0',
      FERRETDB_PORT: '0',
      TEMPORAL_PORT: '0',
      TEMPORAL_UI_PORT: '0',
      // Its own FerretDB and Temporal, whatever the suite runs against.
      MONGODB_URL: undefined,
      TEMPORAL_ADDRESS: undefined,
      APP_PORT: undefined,
      PUBLIC_URL: undefined,
      SHUTDOWN_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'info',
      ...env,
    }),
  });
  let text = '';
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  const launcher: Launcher = {
    child,
    dataDir,
    output: () => text,
    api: '',
    async createKey() {
      const command = readFileSync(path.join(dataDir, 'run', 'ferretdb.pid'), 'utf8').split('\n')[1] ?? '';
      const address = /-listen (\S+)/.exec(command)?.[1];
      if (!address) throw new Error(`no FerretDB address in ${command}`);
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'admin.ts'), 'create-account', '--credits', '1000', '--json'],
          { cwd: PROJECT_ROOT, env: childEnvironment({ DATA_DIR: dataDir, MONGODB_URL: `mongodb://${address}/` }), timeout: 60_000 },
          (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)),
        ),
      );
      return (JSON.parse(stdout) as { api_key: string }).api_key;
    },
    groupAlive() {
      try {
        process.kill(-(child.pid as number), 0);
        return true;
      } catch {
        return false;
      }
    },
    pidOf(name) {
      const file = path.join(dataDir, 'run', `${name}.pid`);
      if (!existsSync(file)) return undefined;
      const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && alive(pid) ? pid : undefined;
    },
    exited,
    async close() {
      const left = processTree(child.pid as number);
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      if (!gone) await exited;
      hooks.release?.(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await eventually(async () => {
      if (gone) throw new Error(`the launcher exited:\n${text}`);
      return until.test(text);
    }, 1_200, 100);
  } catch (error) {
    await launcher.close();
    throw new Error(`the launcher did not get ready: ${(error as Error).message}\n${text.slice(-4_000)}`);
  }
  launcher.api = /\[fetchplane\] API: +(\S+)/.exec(text)?.[1] ?? '';
  return launcher;
}
