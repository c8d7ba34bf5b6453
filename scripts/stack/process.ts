/**
 * One child process of the local stack: spawned with its output in a log file, watched until its
 * readiness probe passes, stopped with SIGTERM then SIGKILL. Its pid is written to a pid file so that
 * a later launcher can end a process an earlier, killed launcher left behind (and only that process).
 *
 * A process that exits after it was ready without being asked to (stop() or kill()) is reported to
 * onCrash listeners: the stack's supervisor restarts it. `wanted` tells a deliberate stop apart, so
 * that supervision never fights whoever stopped the process on purpose.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LogFile } from './log-file';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logDir: string;
  runDir: string;
  /** Node children get an IPC channel: they announce readiness and exit when it closes. */
  ipc?: boolean;
  /** Keeps standard input open as a pipe; the child may exit when it closes (FerretDB does). */
  stdinPipe?: boolean;
  /** Copies the child's output to this stream as well as to its log file. */
  echo?: NodeJS.WritableStream;
  /** Resolves once the child serves; called repeatedly until it does. */
  probe?: () => Promise<boolean>;
  readyTimeoutMs?: number;
  stopTimeoutMs?: number;
  /** The launcher's own output: what goes wrong with the log and pid files (a full disk) is said there. */
  report?: (line: string) => void;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How an exit reads in the launcher's output: `signal SIGKILL` or `code 1`. */
export const describeExit = (exit: ExitInfo): string => (exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Output lines kept in memory for a report when the process keeps failing. */
const RECENT_LINES = 40;

export class ManagedProcess {
  private child: ChildProcess | undefined;
  private log: LogFile | undefined;
  private exited: Promise<void> = Promise.resolve();
  private starting: Promise<void> | undefined;
  private stopping = false;
  private ready = false;
  private readonly crashListeners: Array<(exit: ExitInfo) => void> = [];
  private recent: string[] = [];
  private partialLine = '';
  /** Whether the process should be running: set by start(), cleared by stop() and kill(). */
  wanted = false;
  /** What the child's IPC `ready` message carried (the API reports its port). */
  readyMessage: Record<string, unknown> | undefined;

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Started or starting. */
  get busy(): boolean {
    return this.starting !== undefined || this.running;
  }

  get logFile(): string {
    return path.join(this.spec.logDir, `${this.spec.name}.log`);
  }

  private get pidFile(): string {
    return path.join(this.spec.runDir, `${this.spec.name}.pid`);
  }

  /** The last lines the process wrote (this launcher's runs of it only). */
  recentOutput(count = RECENT_LINES): string[] {
    return [...this.recent, ...(this.partialLine ? [this.partialLine] : [])].slice(-count);
  }

  /** Called when the process exits after it was ready, unasked. */
  onCrash(listener: (exit: ExitInfo) => void): void {
    this.crashListeners.push(listener);
  }

  /** Ends the process a previous launcher of this data folder left running, if it is still ours. */
  endLeftover(): void {
    if (!existsSync(this.pidFile)) return;
    const [pidText, command] = readFileSync(this.pidFile, 'utf8').split('\n');
    const pid = Number(pidText);
    rmSync(this.pidFile, { force: true });
    if (!Number.isInteger(pid) || pid <= 1 || !command) return;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      return; // gone already
    }
    if (!cmdline.includes(command)) return; // the pid was reused by something else
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }

  /** Starts the process and resolves once it is ready; a call while it runs or starts joins that. */
  start(): Promise<void> {
    this.wanted = true;
    if (this.starting) return this.starting;
    if (this.running) return Promise.resolve();
    const starting = this.launch().finally(() => {
      this.starting = undefined;
    });
    this.starting = starting;
    return starting;
  }

  private keepOutput(chunk: Buffer): void {
    const lines = (this.partialLine + chunk.toString('utf8')).split('\n');
    this.partialLine = lines.pop() ?? '';
    this.recent.push(...lines);
    if (this.recent.length > RECENT_LINES) this.recent = this.recent.slice(-RECENT_LINES);
  }

  private async launch(): Promise<void> {
    mkdirSync(this.spec.logDir, { recursive: true });
    mkdirSync(this.spec.runDir, { recursive: true });
    this.endLeftover();
    this.stopping = false;
    this.ready = false;
    this.readyMessage = undefined;
    this.recent = [];
    this.partialLine = '';
    this.log = new LogFile(this.logFile, { report: (line) => this.spec.report?.(`${this.spec.name}: ${line}`) });
    const stdio: Array<'pipe' | 'ignore' | 'ipc'> = [this.spec.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'];
    if (this.spec.ipc) stdio.push('ipc');
    const child = spawn(this.spec.command, this.spec.args, { cwd: this.spec.cwd, env: this.spec.env, stdio });
    this.child = child;
    const ready = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        reject(new Error(`${this.spec.name} exited before it was ready (${describeExit({ code, signal })}); see ${this.logFile}`)),
      );
      if (this.spec.ipc) {
        child.on('message', (message: { type?: string }) => {
          if (message?.type !== 'ready') return;
          this.readyMessage = message as Record<string, unknown>;
          resolve();
        });
      }
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code, signal) => {
      if (this.child !== child || !this.ready || this.stopping) return;
      for (const listener of this.crashListeners) listener({ code, signal });
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer) => {
        this.keepOutput(chunk);
        this.log?.write(chunk);
        this.spec.echo?.write(chunk);
      });
    }
    try {
      writeFileSync(this.pidFile, `${child.pid}\n${[this.spec.command, ...this.spec.args].join(' ')}`);
    } catch (error) {
      // A full disk must not keep a component from starting: only a later launcher's clean-up needs it.
      this.spec.report?.(`${this.spec.name}: cannot write ${this.pidFile} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }

    const timeoutMs = this.spec.readyTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    const probed = this.spec.probe ? this.poll(this.spec.probe, deadline) : ready;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.spec.name} was not ready within ${timeoutMs} ms; see ${this.logFile}`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([probed, timeout, this.spec.probe ? ready.then(() => probed) : ready]);
      if (!this.running) throw new Error(`${this.spec.name} exited before it was ready; see ${this.logFile}`);
      this.ready = true;
    } catch (error) {
      await this.halt();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async poll(probe: () => Promise<boolean>, deadline: number): Promise<void> {
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.spec.name} exited before it was ready; see ${this.logFile}`);
      if (await probe().catch(() => false)) return;
      await sleep(150);
    }
  }

  /** SIGTERM, then SIGKILL after the stop timeout. Resolves when the process is gone. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.wanted = false;
    await this.halt(signal);
    // A start in progress ends with the process it spawned: wait for it, so a stop leaves nothing behind.
    if (this.starting) await this.starting.catch(() => undefined);
  }

  /** Ends the process at once, as a crash would (but on purpose: supervision leaves it stopped). */
  async kill(): Promise<void> {
    await this.stop('SIGKILL');
  }

  private async halt(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && this.running) {
      child.kill(signal);
      const killed = await Promise.race([this.exited.then(() => true), sleep(this.spec.stopTimeoutMs ?? 20_000).then(() => false)]);
      if (!killed) {
        child.kill('SIGKILL');
        await this.exited;
      }
    }
    await this.exited;
    rmSync(this.pidFile, { force: true });
    await this.log?.close();
    this.log = undefined;
  }
}
