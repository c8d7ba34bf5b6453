/**
 * A full disk is an outage that heals, not a crash. A launcher of its own (`npm start`) runs with two
 * small tmpfs mounts in its data folder: one holds FerretDB's files, the other the components' logs.
 * Each is filled to its last byte while the service is used, then emptied:
 *   - the store's disk full: Fetch and job starts answer 503 `service_unavailable` naming the database,
 *     with Retry-After, never a 500; `/readyz` names the database, not the worker (whose heartbeats
 *     merely cannot be written); once space returns everything answers again by itself;
 *   - the logs' disk full: the launcher and every component keep running (an unhandled ENOSPC on a log
 *     stream used to end them all); the lines lost are counted and reported once space returns.
 * Mounting needs root (CAP_SYS_ADMIN); without it the suite is skipped, saying so.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { startLauncher, type Launcher } from '../helpers/launcher';
import { eventually } from '../helpers/stack';

const STORE_DISK = '64m';
const LOG_DISK = '16m';

function mountTmpfs(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
}

/** Detached at once even while a process that was just killed still holds a file there (`-l`). */
function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  } catch {
    // not mounted (a failed start)
  }
}

/** Why tmpfs cannot be mounted here, or undefined when it can. */
function mountImpossible(): string | undefined {
  const probe = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-mount-probe-'));
  try {
    mountTmpfs(probe, '1m');
    unmount(probe);
    return undefined;
  } catch (error) {
    return `mounting a tmpfs failed (${((error as { stderr?: Buffer }).stderr?.toString() || (error as Error).message).trim()}); this suite needs root`;
  } finally {
    rmdirSync(probe);
  }
}

/** Fills the disk under `dir` to its last byte with one file; returns the file (remove it to free the space). */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'a');
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const block = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          writeSync(fd, block);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: response.status, headers: response.headers, body };
}

describe('a full disk: an outage that heals', function () {
  this.timeout(600_000);
  let launcher: Launcher | undefined;
  let site: FixtureServer;
  let key: string;
  const mounts = (dataDir: string) => ({ store: path.join(dataDir, 'ferretdb'), logs: path.join(dataDir, 'logs') });

  before(async function () {
    const impossible = mountImpossible();
    if (impossible) {
      process.stdout.write(`      skipped: ${impossible}\n`);
      this.skip();
    }
    site = await startFixtureServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end('<html><head><title>up</title></head><body><p>up</p></body></html>');
    });
    // The test asks as fast as answers come: a request budget above what it sends.
    const budget = 'mcp_sessions=20,scheduled_jobs=5,stored_inputs=20,stored_input_bytes=200mb,concurrent_exports=3,requests_per_second=200,request_burst=400,requests_in_flight=200';
    launcher = await startLauncher({ TARGET_ALLOWLIST: '127.0.0.1', ACCOUNT_LIMITS: budget }, undefined, {
      prepare(dataDir) {
        mountTmpfs(mounts(dataDir).store, STORE_DISK);
        mountTmpfs(mounts(dataDir).logs, LOG_DISK);
      },
      release(dataDir) {
        unmount(mounts(dataDir).store);
        unmount(mounts(dataDir).logs);
      },
    });
    key = await launcher.createKey();
  });
  after(async () => {
    await launcher?.close();
    await site?.close();
  });

  const api = (): string => (launcher as Launcher).api;
  const fetchPage = (): Promise<Answer> => call(`${api()}/v1/?apikey=${key}&url=${encodeURIComponent(site.url)}`);
  const createJob = (): Promise<Answer> => call(`${api()}/v1/jobs`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ tasks: [{ url: site.url }] }) });
  const readyz = (): Promise<Answer> => call(`${api()}/readyz`);
  const launcherAlive = async (): Promise<boolean> => (await Promise.race([launcher!.exited.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 50))]));

  function expectDatabaseUnavailable(answer: Answer, what: string): void {
    expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).to.equal(503);
    expect(answer.body.code, what).to.equal('service_unavailable');
    expect(answer.body.component, what).to.equal('database');
    expect(String(answer.body.detail), what).to.match(/disk is full/);
    expect(answer.headers.get('retry-after'), what).to.match(/^\d+$/);
  }

  it('store’s disk full: 503 naming the database (never a 500), /readyz blames the database, and all resumes once space returns', async () => {
    expect((await fetchPage()).status, 'before').to.equal(200);
    const filler = fill(mounts(launcher!.dataDir).store);
    try {
      // Longer than the worker's heartbeat records take to go stale (5 × WORKER_HEARTBEAT_MS): the
      // worker check must not be what /readyz and the job starts blame.
      const answers: Answer[] = [];
      const readiness: Answer[] = [];
      const jobs: Answer[] = [];
      const until = Date.now() + 8_000;
      while (Date.now() < until) {
        const [page, ready, job] = await Promise.all([fetchPage(), readyz(), createJob()]);
        answers.push(page);
        readiness.push(ready);
        jobs.push(job);
      }
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status !== 200 && status !== 503), `Fetch answers ${statuses.join(',')}`).to.deep.equal([]);
      const refused = answers.filter((answer) => answer.status === 503);
      expect(refused.length, 'Fetch refused while the store cannot write').to.be.greaterThan(0);
      refused.forEach((answer, index) => expectDatabaseUnavailable(answer, `Fetch ${index}`));
      jobs.forEach((answer, index) => expectDatabaseUnavailable(answer, `job start ${index}`));
      for (const [index, ready] of readiness.entries()) {
        expect(ready.status, `readyz ${index}`).to.equal(503);
        const checks = ready.body.checks as Record<string, string>;
        expect(checks.database, `readyz ${index}`).to.match(/^refuses writes/);
        expect(checks.worker, `readyz ${index}: the worker runs`).to.not.match(/^unreachable/);
      }
      expect(await launcherAlive(), 'the launcher').to.equal(true);
    } finally {
      rmSync(filler, { force: true });
    }
    // Space again: everything answers by itself.
    await eventually(async () => (await readyz()).status === 200, 150, 200);
    expect((await fetchPage()).status, 'Fetch after').to.equal(200);
    const job = await createJob();
    expect(job.status, JSON.stringify(job.body)).to.equal(201);
    await eventually(async () => {
      const read = await call(`${api()}/v1/jobs/${String(job.body.job_id)}`, { headers: { 'X-API-Key': key } });
      return (read.body.latest_run as { status?: string } | undefined)?.status === 'completed';
    }, 300, 200);
  });

  it('logs’ disk full: the launcher and every component keep running; the lines lost are counted and reported once space returns', async () => {
    const logs = mounts(launcher!.dataDir).logs;
    const filler = fill(logs);
    try {
      // Each request writes an access line to the API's log: those writes fail with ENOSPC.
      for (let n = 0; n < 20; n++) expect((await fetchPage()).status, `Fetch ${n}`).to.equal(200);
      const failed = /api: cannot write .*api\.log \(ENOSPC\)/;
      await eventually(async () => failed.test(launcher!.output()) || !(await launcherAlive()), 100, 100);
      expect(await launcherAlive(), `the launcher; its last output:\n${launcher!.output().slice(-2_000)}`).to.equal(true);
      expect(launcher!.output()).to.match(failed);
      for (let n = 0; n < 5; n++) expect((await fetchPage()).status, `Fetch ${n} after the failure`).to.equal(200);
      expect((await readyz()).status, 'readyz with the logs’ disk full').to.equal(200);
    } finally {
      rmSync(filler, { force: true });
    }
    // The file is tried again a few seconds after its failure, at the next line written.
    await eventually(async () => {
      await fetchPage();
      return /api: .*api\.log is written again; [1-9]\d* line\(s\) were dropped meanwhile/.test(launcher!.output());
    }, 100, 200);
    expect(readFileSync(path.join(logs, 'api.log'), 'utf8')).to.match(/\[launcher\] [1-9]\d* line\(s\) of output were dropped while .*api\.log could not be written \(ENOSPC\)/);
    expect(await launcherAlive(), 'the launcher').to.equal(true);
    expect(existsSync(path.join(logs, 'filler'))).to.equal(false);
  });
});
