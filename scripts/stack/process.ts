/**
 * One child process of the local stack: spawned with its output in a log file, watched until its
 * readiness probe passes, stopped with SIGTERM then SIGKILL. Its pid is written to a pid file so that
 * a later launcher can end a process an earlier, killed launcher left behind (and only that process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';

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
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ManagedProcess {
  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get logFile(): string {
    return path.join(this.spec.logDir, `${this.spec.name}.log`);
  }

  private get pidFile(): string {
    return path.join(this.spec.runDir, `${this.spec.name}.pid`);
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

  async start(): Promise<void> {
    mkdirSync(this.spec.logDir, { recursive: true });
    mkdirSync(this.spec.runDir, { recursive: true });
    this.endLeftover();
    this.log = createWriteStream(this.logFile, { flags: 'a' });
    const stdio: Array<'pipe' | 'ignore' | 'ipc'> = [this.spec.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'];
    if (this.spec.ipc) stdio.push('ipc');
    const child = spawn(this.spec.command, this.spec.args, { cwd: this.spec.cwd, env: this.spec.env, stdio });
    this.child = child;
    const ready = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        reject(new Error(`${this.spec.name} exited before it was ready (${signal ?? `code ${code}`}); see ${this.logFile}`)),
      );
      if (this.spec.ipc) {
        child.on('message', (message: { type?: string }) => {
          if (message?.type === 'ready') resolve();
        });
      }
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer) => {
        this.log?.write(chunk);
        this.spec.echo?.write(chunk);
      });
    }
    writeFileSync(this.pidFile, `${child.pid}\n${[this.spec.command, ...this.spec.args].join(' ')}`);

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
    } catch (error) {
      await this.stop();
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
    await new Promise<void>((resolve) => (this.log ? this.log.end(resolve) : resolve()));
    this.log = undefined;
  }

  /** Ends the process at once, as a crash would. */
  async kill(): Promise<void> {
    await this.stop('SIGKILL');
  }
}
