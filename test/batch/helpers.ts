/**
 * Batch through the running service: accounts made for the test, requests with `X-API-Key`, a local
 * target site whose pages answer by path, and waiting for a run to end.
 */
import { expect } from 'chai';
import { newAccount, openAccounts, type AccountsHandle, type TestAccount } from '../helpers/app';
import { batchCollections } from '../../core/batch/store';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { batchRequest, type Answer, type Json } from '../webhooks/helpers';

let handle: AccountsHandle | undefined;

export async function accountsHandle(): Promise<AccountsHandle> {
  handle ??= await openAccounts();
  return handle;
}

after(async () => {
  await handle?.close();
  handle = undefined;
});

export async function batchAccount(options: { credits?: number; concurrency?: number } = {}): Promise<TestAccount> {
  return newAccount((await accountsHandle()).accounts, { credits: options.credits ?? 1_000_000, ...(options.concurrency ? { concurrency: options.concurrency } : {}) });
}

export async function batchStore() {
  return batchCollections((await accountsHandle()).db.db);
}

/** Credits settled for the account this period (holds not counted). */
export async function creditsUsed(accountId: string): Promise<number> {
  return (await (await accountsHandle()).accounts.charging.usage(accountId)).used;
}

/**
 * A target site: `/ok/<n>` is a small HTML page, `/missing/<n>` 404, `/slow/<n>` answers after
 * `slowMs`, `/flaky/<n>` fails with 503 the first time it is asked and then answers.
 */
export async function startTargetSite(options: { slowMs?: number } = {}): Promise<FixtureServer & { hits: Map<string, number>; requests: SiteRequests }> {
  const hits = new Map<string, number>();
  const requests = new SiteRequests();
  const server = await startFixtureServer(async (req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    requests.began();
    res.on('close', () => requests.ended());
    if (path.startsWith('/missing/')) {
      res.statusCode = 404;
      res.end('no such page');
      return;
    }
    if (path.startsWith('/flaky/') && hits.get(path) === 1) {
      res.statusCode = 503;
      res.end('try later');
      return;
    }
    if (path.startsWith('/slow/')) await new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 500));
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(`<html><head><title>${path}</title></head><body><h1>Page ${path}</h1></body></html>`);
  });
  return Object.assign(server, { hits, requests });
}

/** The site's requests as events: how many are being answered, and a count of those begun (in order). */
export class SiteRequests {
  private active = 0;
  private begun = 0;
  private readonly waiters: Array<() => void> = [];

  began(): void {
    this.active++;
    this.begun++;
    this.wake();
  }

  ended(): void {
    this.active--;
    this.wake();
  }

  get inFlight(): number {
    return this.active;
  }

  get started(): number {
    return this.begun;
  }

  /** Resolves once `ready()` holds, re-checked on every request begun or ended (fails after `timeoutMs`). */
  async until(ready: () => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > deadline) throw new Error(`site requests: condition not met (in flight ${this.active}, begun ${this.begun})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** Waits until the run of `runId` has ended in its record (its tasks in flight finished), and answers the record. */
export async function waitForRunEnd(runId: string, timeoutMs = 90_000) {
  const store = await batchStore();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await store.runs.findOne({ _id: runId });
    if (run?.ended_at) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(run?.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export const urls = (site: FixtureServer, kind: string, count: number, from = 0): Array<{ url: string }> =>
  Array.from({ length: count }, (_, index) => ({ url: `${site.url}${kind}/${from + index}` }));

export async function waitForRun(key: string, jobId: string, statuses = ['completed', 'failed', 'stopped', 'deleted'], timeoutMs = 90_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await batchRequest(key, 'GET', `/v1/jobs/${jobId}`);
    expect(job.status, JSON.stringify(job.body)).to.equal(200);
    const run = job.body.latest_run as Json | null;
    if (run && statuses.includes(run.status as string)) return run;
    if (Date.now() > deadline) throw new Error(`run of ${jobId} did not reach ${statuses.join('/')}: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Every result of a run, following `next_cursor`. */
export async function allResults(key: string, path: string, status?: string): Promise<Json[]> {
  const rows: Json[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const query = new URLSearchParams({ ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
    const answer: Answer = await batchRequest(key, 'GET', `${path}${query.size > 0 ? `?${query}` : ''}`);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    rows.push(...(answer.body.results as Json[]));
    cursor = (answer.body.next_cursor as string | null) ?? undefined;
    if (!cursor) return rows;
  }
  throw new Error('too many pages');
}

export { batchRequest, type Answer, type Json };
