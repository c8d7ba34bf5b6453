/**
 * The local stack, shared by `npm start` and the test suite:
 *
 *   FerretDB (SQLite) ─┐
 *                      ├─> worker (workflows + activities) ─┐
 *   Temporal dev ──────┘                                    ├─> ready: API URL, Web UI URL, data folder
 *                          API (Koa) ───────────────────────┘
 *
 * FerretDB and Temporal start only when MONGODB_URL / TEMPORAL_ADDRESS are unset. Stopping runs in
 * reverse: API, worker, then Temporal and FerretDB. While it runs, a component that exits unasked is
 * restarted (supervisor.ts).
 *
 * Port 0 means "a port nobody can take before it is bound": the API binds port 0 itself and reports
 * the port it got in its ready message; FerretDB and Temporal cannot, so the stack picks a free port
 * outside the kernel's ephemeral range for them (ports.ts) and picks again if their first start finds
 * it taken. Once a component has served on a port it keeps it, so that restarts keep every URL.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { childEnvironment, PROJECT_ROOT, type Config } from '../../base/config';
import { connectTemporal, SEARCH_ATTRIBUTES } from '../../base/temporal';
import { ensureServerKey } from './secrets';
import { ensureChromium, ensureFerretDb, ensureTemporalCli } from './binaries';
import { addressInUse, pickPort } from './ports';
import { SERVICE_NODE_FLAGS } from './node-flags';
import { ManagedProcess } from './process';
import { removeDatabaseRecord, writeDatabaseRecord } from './record';
import { Supervisor } from './supervisor';

export type ComponentName = 'ferretdb' | 'temporal' | 'worker' | 'api';
type PortName = 'api' | 'ferretdb' | 'temporal' | 'temporalUi';

export interface StackOptions {
  config: Config;
  /** Ports to use instead of the configured ones; 0: a port nobody can take in between (see above). */
  ports?: Partial<Record<PortName, number>>;
  /** Extra environment for the API and the worker. */
  serviceEnv?: Record<string, string>;
  /** Stream that also receives the API's and the worker's output. */
  echo?: NodeJS.WritableStream;
  report?: (line: string) => void;
  /** A component failed more often than supervision allows (default: report it with its last lines). */
  onGiveUp?: (name: ComponentName, reason: string, lastLines: string[]) => void;
}

export interface StackUrls {
  api: string;
  mongodb: string;
  temporal: string;
  temporalUi: string | undefined;
  dataDir: string;
}

/** A component did not start; carries its last output lines for the report. */
export class ComponentStartError extends Error {
  constructor(
    readonly component: ComponentName,
    cause: Error,
    readonly lastLines: string[],
  ) {
    super(cause.message);
    this.name = 'ComponentStartError';
  }
}

/** The ports each component binds: picked again together when its first start finds one taken. */
const PORTS_OF: Record<ComponentName, PortName[]> = { ferretdb: ['ferretdb'], temporal: ['temporal', 'temporalUi'], worker: [], api: ['api'] };
const PORT_ATTEMPTS = 5;

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
  private readonly ports: Record<PortName, number>;
  /** Ports given as 0 that the stack picks (FerretDB's and Temporal's) until their component first served. */
  private readonly unsettled = new Set<PortName>();
  private readonly supervisor: Supervisor<ComponentName>;
  /** Set by stop(): a start still in progress must not start anything more. */
  private stopping = false;

  constructor(private readonly options: StackOptions) {
    const { config } = options;
    this.ports = {
      api: options.ports?.api ?? config.port,
      ferretdb: options.ports?.ferretdb ?? config.ferretdbPort,
      temporal: options.ports?.temporal ?? config.temporalPort,
      temporalUi: options.ports?.temporalUi ?? config.temporalUiPort,
    };
    for (const name of ['ferretdb', 'temporal', 'temporalUi'] as const) if (this.ports[name] === 0) this.unsettled.add(name);
    this.report = options.report ?? (() => undefined);
    this.urls = { api: '', mongodb: '', temporal: '', temporalUi: undefined, dataDir: config.dataDir };
    this.supervisor = new Supervisor<ComponentName>({
      policy: { restartLimit: config.restartLimit, windowMs: config.restartWindowSeconds * 1000 },
      restart: (name) => this.startOne(name),
      report: this.report,
      giveUp: (name, reason) => {
        const lastLines = this.component(name).recentOutput();
        if (options.onGiveUp) options.onGiveUp(name, reason, lastLines);
        else this.report(`${reason}; its last lines:\n${lastLines.join('\n')}`);
      },
    });
    this.define();
    this.applyPorts();
    for (const [name, component] of this.components) this.supervisor.watch(name, component);
  }

  private define(): void {
    const { config } = this.options;
    const base = {
      cwd: PROJECT_ROOT,
      logDir: path.join(config.dataDir, 'logs'),
      runDir: path.join(config.dataDir, 'run'),
      stopTimeoutMs: 10_000,
      report: (line: string) => this.report(line),
    };
    const env = childEnvironment({});
    if (!config.mongodbUrl) {
      this.components.set(
        'ferretdb',
        new ManagedProcess({
          ...base,
          name: 'ferretdb',
          command: '', // resolved in prepare()
          args: [], // applyPorts()
          env,
          stdinPipe: true,
          probe: () => mongoAnswers(this.urls.mongodb),
        }),
      );
    }
    if (!config.temporalAddress) {
      this.components.set(
        'temporal',
        new ManagedProcess({
          ...base,
          name: 'temporal',
          command: '',
          args: [],
          env,
          probe: () => temporalAnswers(this.urls.temporal, config.temporalNamespace, this.urls.temporalUi),
        }),
      );
    }
    const serviceEnv = childEnvironment({ DATA_DIR: config.dataDir, STACK_DIR: config.stackDir, ...this.options.serviceEnv });
    const node = (entry: string) => ({ command: process.execPath, args: [...SERVICE_NODE_FLAGS, '--import', 'tsx', path.join(PROJECT_ROOT, entry)] });
    // They drain for SHUTDOWN_TIMEOUT_MS and cut themselves short 2 s later; the launcher waits a little longer.
    const service = { ...base, ipc: true, echo: this.options.echo, stopTimeoutMs: config.shutdownTimeoutMs + 5_000 };
    this.components.set('worker', new ManagedProcess({ ...service, name: 'worker', ...node('workers/main.ts'), env: { ...serviceEnv }, readyTimeoutMs: 120_000 }));
    this.components.set('api', new ManagedProcess({ ...service, name: 'api', ...node('api/main.ts'), env: { ...serviceEnv } }));
  }

  /** Writes the current ports into the URLs and into each component's arguments and environment. */
  private applyPorts(): void {
    const { config } = this.options;
    const { ports } = this;
    Object.assign(this.urls, {
      api: `http://127.0.0.1:${ports.api}`,
      mongodb: config.mongodbUrl ?? `mongodb://127.0.0.1:${ports.ferretdb}/`,
      temporal: config.temporalAddress ?? `127.0.0.1:${ports.temporal}`,
      temporalUi: config.temporalAddress ? undefined : `http://127.0.0.1:${ports.temporalUi}`,
    });
    const ferretdb = this.components.get('ferretdb');
    if (ferretdb) ferretdb.spec.args = ['-listen', `127.0.0.1:${ports.ferretdb}`, '-data', path.join(config.dataDir, 'ferretdb'), '-exit-with-parent'];
    const temporal = this.components.get('temporal');
    if (temporal) {
      const searchAttributes = Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);
      const namespaces = config.temporalNamespace === 'default' ? [] : ['--namespace', config.temporalNamespace];
      temporal.spec.args = [
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
      ];
    }
    for (const name of ['worker', 'api'] as const) {
      Object.assign(this.component(name).spec.env, { MONGODB_URL: this.urls.mongodb, TEMPORAL_ADDRESS: this.urls.temporal });
    }
    this.component('api').spec.env.PORT = String(ports.api);
  }

  private async pickPorts(name: ComponentName): Promise<void> {
    for (const port of PORTS_OF[name]) if (this.unsettled.has(port) && this.ports[port] === 0) this.ports[port] = await pickPort();
    this.applyPorts();
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
    this.stopping = false;
    this.prepare();
    this.supervisor.resume();
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

  /** Starts one component (again), on its ports; resolves once it is ready. */
  async startOne(name: ComponentName): Promise<void> {
    const started = Date.now();
    const component = this.component(name);
    for (let attempt = 1; ; attempt++) {
      if (this.stopping) throw new Error(`the stack is stopping; ${name} not started`);
      await this.pickPorts(name);
      if (this.stopping) throw new Error(`the stack is stopping; ${name} not started`);
      try {
        await component.start();
        break;
      } catch (error) {
        const lastLines = component.recentOutput();
        const picked = PORTS_OF[name].filter((port) => this.unsettled.has(port));
        if (!component.wanted || picked.length === 0 || attempt >= PORT_ATTEMPTS || !addressInUse(lastLines.join('\n'))) {
          throw new ComponentStartError(name, error as Error, lastLines);
        }
        this.report(`${name}: a port was taken before it could bind it; picking others`);
        for (const port of picked) this.ports[port] = 0;
      }
    }
    for (const port of PORTS_OF[name]) this.unsettled.delete(port);
    // Tools outside the stack (npm run admin) find the port it chose here.
    if (name === 'ferretdb') {
      try {
        writeDatabaseRecord(this.options.config.dataDir, this.urls.mongodb);
      } catch (error) {
        this.report(`cannot record FerretDB's address for npm run admin (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
    }
    const reported = component.readyMessage?.port;
    if (name === 'api' && this.ports.api === 0 && typeof reported === 'number') {
      // Kept from now on: a restarted API serves where clients already connect.
      this.ports.api = reported;
      this.applyPorts();
    }
    this.report(`${name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  /** Stops in order: the API stops accepting first, the worker drains, then the servers go. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.supervisor.halt();
    for (const group of [['api'], ['worker'], ['temporal', 'ferretdb']] as ComponentName[][]) {
      await Promise.all(group.filter((name) => this.has(name)).map((name) => this.component(name).stop()));
    }
    if (this.has('ferretdb')) removeDatabaseRecord(this.options.config.dataDir);
    // A start that was under way when the stop began may have spawned a component since its turn.
    await Promise.all([...this.components.values()].filter((component) => component.busy).map((component) => component.stop()));
  }
}
