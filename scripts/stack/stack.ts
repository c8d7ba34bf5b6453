/**
 * The local stack, shared by `npm start` and the test suite:
 *
 *   FerretDB (SQLite) ─┐
 *                      ├─> worker (workflows + activities) ─┐
 *   Temporal dev ──────┘                                    ├─> ready: API URL, Web UI URL, data folder
 *                          API (Koa) ───────────────────────┘
 *
 * FerretDB and Temporal start only when MONGODB_URL / TEMPORAL_ADDRESS are unset. Stopping runs in
 * reverse: API, worker, then Temporal and FerretDB.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { childEnvironment, PROJECT_ROOT, type Config } from '../../core/config';
import { connectTemporal, SEARCH_ATTRIBUTES } from '../../core/temporal';
import { ensureServerKey } from './secrets';
import { ensureChromium, ensureFerretDb, ensureTemporalCli } from './binaries';
import { ManagedProcess } from './process';

export type ComponentName = 'ferretdb' | 'temporal' | 'worker' | 'api';

export interface StackOptions {
  config: Config;
  /** Ports to use instead of the configured ones (the tests pick free ports). */
  ports?: Partial<Record<'api' | 'ferretdb' | 'temporal' | 'temporalUi', number>>;
  /** Extra environment for the API and the worker. */
  serviceEnv?: Record<string, string>;
  /** Stream that also receives the API's and the worker's output. */
  echo?: NodeJS.WritableStream;
  report?: (line: string) => void;
}

export interface StackUrls {
  api: string;
  mongodb: string;
  temporal: string;
  temporalUi: string | undefined;
  dataDir: string;
}

async function mongoAnswers(url: string): Promise<boolean> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 1_000, connectTimeoutMS: 1_000 });
  try {
    await client.db('admin').command({ ping: 1 });
    return true;
  } finally {
    await client.close();
  }
}

async function temporalAnswers(address: string, namespace: string, uiUrl: string | undefined): Promise<boolean> {
  const temporal = connectTemporal({ temporalAddress: address, temporalNamespace: namespace });
  try {
    await temporal.ping(1_000);
    await temporal.client.workflowService.describeNamespace({ namespace });
  } finally {
    await temporal.close();
  }
  if (uiUrl) {
    const response = await fetch(uiUrl, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok;
  }
  return true;
}

export class Stack {
  readonly urls: StackUrls;
  private readonly components = new Map<ComponentName, ManagedProcess>();
  private readonly report: (line: string) => void;

  constructor(private readonly options: StackOptions) {
    const { config } = options;
    const ports = {
      api: options.ports?.api ?? config.port,
      ferretdb: options.ports?.ferretdb ?? config.ferretdbPort,
      temporal: options.ports?.temporal ?? config.temporalPort,
      temporalUi: options.ports?.temporalUi ?? config.temporalUiPort,
    };
    this.report = options.report ?? (() => undefined);
    this.urls = {
      api: `http://127.0.0.1:${ports.api}`,
      mongodb: config.mongodbUrl ?? `mongodb://127.0.0.1:${ports.ferretdb}/`,
      temporal: config.temporalAddress ?? `127.0.0.1:${ports.temporal}`,
      temporalUi: config.temporalAddress ? undefined : `http://127.0.0.1:${ports.temporalUi}`,
      dataDir: config.dataDir,
    };
    this.define(ports);
  }

  private define(ports: { api: number; ferretdb: number; temporal: number; temporalUi: number }): void {
    const { config } = this.options;
    const base = {
      cwd: PROJECT_ROOT,
      logDir: path.join(config.dataDir, 'logs'),
      runDir: path.join(config.dataDir, 'run'),
    };
    const env = childEnvironment({});
    if (!config.mongodbUrl) {
      this.components.set(
        'ferretdb',
        new ManagedProcess({
          ...base,
          name: 'ferretdb',
          command: '', // resolved in prepare()
          args: ['-listen', `127.0.0.1:${ports.ferretdb}`, '-data', path.join(config.dataDir, 'ferretdb'), '-exit-with-parent'],
          env,
          stdinPipe: true,
          probe: () => mongoAnswers(this.urls.mongodb),
        }),
      );
    }
    if (!config.temporalAddress) {
      const searchAttributes = Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);
      const namespaces = config.temporalNamespace === 'default' ? [] : ['--namespace', config.temporalNamespace];
      this.components.set(
        'temporal',
        new ManagedProcess({
          ...base,
          name: 'temporal',
          command: '',
          args: [
            'server', 'start-dev',
            '--db-filename', path.join(config.dataDir, 'temporal', 'temporal.db'),
            '--ip', '127.0.0.1',
            '--port', String(ports.temporal),
            '--ui-port', String(ports.temporalUi),
            '--ui-disable-news-fetch',
            '--dynamic-config-value', 'frontend.enableServerVersionCheck=false',
            '--log-level', 'warn',
            ...namespaces,
            ...searchAttributes,
          ],
          env,
          probe: () => temporalAnswers(this.urls.temporal, config.temporalNamespace, this.urls.temporalUi),
        }),
      );
    }
    const serviceEnv = (extra: Record<string, string>) =>
      childEnvironment({
        DATA_DIR: config.dataDir,
        STACK_DIR: config.stackDir,
        MONGODB_URL: this.urls.mongodb,
        TEMPORAL_ADDRESS: this.urls.temporal,
        ...this.options.serviceEnv,
        ...extra,
      });
    const node = (entry: string) => ({ command: process.execPath, args: ['--import', 'tsx', path.join(PROJECT_ROOT, entry)] });
    this.components.set(
      'worker',
      new ManagedProcess({ ...base, name: 'worker', ...node('workers/main.ts'), env: serviceEnv({}), ipc: true, echo: this.options.echo, readyTimeoutMs: 120_000 }),
    );
    this.components.set(
      'api',
      new ManagedProcess({
        ...base,
        name: 'api',
        ...node('api/main.ts'),
        env: serviceEnv({ PORT: String(ports.api) }),
        ipc: true,
        echo: this.options.echo,
      }),
    );
  }

  /** Obtains every binary the stack needs (the slow part of a first start). */
  prepare(): void {
    const { config } = this.options;
    const env = childEnvironment({});
    const chromium = ensureChromium(config.chromiumPath, config.stackDir, env, config.installMissing, this.report);
    const secretsKey = config.secretsKey ?? ensureServerKey(config.dataDir);
    for (const name of ['worker', 'api'] as const) {
      const component = this.components.get(name);
      if (component) Object.assign(component.spec.env, { CHROMIUM_PATH: chromium, SECRETS_KEY: secretsKey });
    }
    const ferretdb = this.components.get('ferretdb');
    if (ferretdb) ferretdb.spec.command = ensureFerretDb(config.stackDir, env, config.installMissing, this.report);
    const temporal = this.components.get('temporal');
    mkdirSync(path.join(config.dataDir, 'temporal'), { recursive: true });
    if (temporal) temporal.spec.command = ensureTemporalCli(config.stackDir, env, config.installMissing, this.report);
  }

  component(name: ComponentName): ManagedProcess {
    const component = this.components.get(name);
    if (!component) throw new Error(`${name} is not managed by this stack`);
    return component;
  }

  has(name: ComponentName): boolean {
    return this.components.has(name);
  }

  async start(): Promise<void> {
    this.prepare();
    try {
      await Promise.all(
        (['ferretdb', 'temporal'] as const).filter((name) => this.has(name)).map((name) => this.startOne(name)),
      );
      await Promise.all((['worker', 'api'] as const).map((name) => this.startOne(name)));
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async startOne(name: ComponentName): Promise<void> {
    const started = Date.now();
    await this.component(name).start();
    this.report(`${name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  /** Stops in order: the API stops accepting first, the worker drains, then the servers go. */
  async stop(): Promise<void> {
    for (const group of [['api'], ['worker'], ['temporal', 'ferretdb']] as ComponentName[][]) {
      await Promise.all(group.filter((name) => this.has(name)).map((name) => this.component(name).stop()));
    }
  }
}
