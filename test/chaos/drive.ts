/**
 * The chaos drive: steady mixed traffic against a running stack (Fetch calls, Batch jobs that end in
 * webhooks, crawls), while each of worker, API, FerretDB and Temporal is SIGKILLed once, from outside,
 * at a seeded random moment, with the launcher alone bringing each back. Then it checks what must hold
 * for every piece of work the service accepted. Used by test/chaos/chaos.test.ts (a short run in the
 * suite) and bench/chaos.ts (minutes, with figures).
 *
 *   traffic ─┬─ Fetch lanes ───────────────┐
 *            ├─ Batch jobs (webhook) ──────┼─> stop ─> wait for every accepted job and crawl to end
 *            └─ crawls ────────────────────┘           ─> checks ─> report
 *   kills ── worker, api, ferretdb, temporal in a seeded order, one per quarter of the run,
 *            each followed by "back": a new process of it and /readyz 200
 *
 * Clients behave as the official ones do: a start is retried with the same Idempotency-Key after a
 * connection error, a 503 or a 429, and reads are retried until the service answers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from 'mongodb';
import type { Accounts } from '../../core/accounts';
import { startCrawlSite, type CrawlSite } from '../fixtures/crawl-site/server';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { newAccount, type TestAccount } from '../helpers/app';
import { seeded } from '../helpers/random';
import { startMonitorLane, type MonitorFigures } from './monitors';

export type ChaosComponent = 'worker' | 'api' | 'ferretdb' | 'temporal';

export interface ChaosTarget {
  /** The API's base URL now. */
  api(): string;
  /** The pid of a component's current process (undefined while none runs). */
  pid(component: ChaosComponent): number | undefined;
  /** An accounts service and database of the stack's own, for set-up and the checks (not used while killing). */
  accounts: Accounts;
  db: Db;
  /** Host of the crawl fixture site, resolved to loopback by the stack's HOST_OVERRIDES (`*.fixture.test`). */
  crawlSiteName?: string;
  /** The API's log as written so far: a 5xx other than 503 is reported with the lines of its request. */
  apiLog?: () => string;
}

export interface ChaosOptions {
  seed: number;
  durationMs: number;
  /** Fetch calls in flight at once. */
  fetchLanes?: number;
  /** Tasks per Batch job, and how often a job is submitted. */
  jobTasks?: number;
  jobEveryMs?: number;
  /** Pages per crawl, and how often a crawl is started. */
  crawlPages?: number;
  crawlEveryMs?: number;
  /** How long accepted work may take to end after the traffic stops. */
  settleMs?: number;
  log?: (line: string) => void;
}

export interface KillRecord {
  component: ChaosComponent;
  /** Milliseconds from the start of the run. */
  at: number;
  pid: number;
  /** From the kill to a new process of it with /readyz answering 200; undefined: never back. */
  backAfterMs?: number;
}

export interface ChaosReport {
  seed: number;
  kills: KillRecord[];
  answers: Record<string, number>;
  fetch: { ok: number; unanswered: number; charged: number };
  jobs: { accepted: number; tasks: number; successful: number; charged: number; webhooks: number; duplicateDeliveries: number };
  crawls: { accepted: number; pagesFetched: number; charged: number };
  /** A monitor checked every 2 seconds through the kills. */
  monitors: MonitorFigures;
  /** Every broken promise, in words; empty when all held. */
  problems: string[];
  /** Counts the issue's goals are stated in. */
  lost: number;
  doubleCharges: number;
  stuck: number;
  fiveHundreds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

/** A target whose pages always answer 200 after a short delay; counts requests per path. */
async function startTarget(): Promise<{ url: string; hits: Map<string, number>; close(): Promise<void> }> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    setTimeout(() => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(`<html><head><title>${path}</title></head><body><h1>Page ${path}</h1><p>chaos target</p></body></html>`);
    }, 40 + (path.length % 7) * 20);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function runChaos(target: ChaosTarget, options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed);
  const answers: Record<string, number> = {};
  /** Request ids of answers 5xx other than 503. */
  const serverErrors: string[] = [];
  const count = (label: string) => (answers[label] = (answers[label] ?? 0) + 1);
  const problems: string[] = [];

  const site = await startTarget();
  const crawlSite: CrawlSite = await startCrawlSite({ pages: options.crawlPages ?? 12, name: target.crawlSiteName ?? 'chaos', fanout: 3, quiet: true });
  const receiver: WebhookReceiver = await startWebhookReceiver();
  // One account per surface, so each account's charges are exactly one surface's successes.
  const fetcher: TestAccount = await newAccount(target.accounts, { credits: 10_000_000, concurrency: 25 });
  const batcher: TestAccount = await newAccount(target.accounts, { credits: 10_000_000, concurrency: 10 });
  const crawler: TestAccount = await newAccount(target.accounts, { credits: 10_000_000 });

  /** One HTTP exchange; a connection error or time-out is `status: 0`. Counts every answer by status. */
  const call = async (method: string, path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    try {
      const response = await fetch(`${target.api()}${path}`, {
        method,
        headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      count(String(response.status));
      let parsed: Json = {};
      try {
        parsed = text ? (JSON.parse(text) as Json) : {};
      } catch {
        parsed = { text: text.slice(0, 200) };
      }
      if (response.status >= 500 && response.status !== 503) {
        log(`${response.status} on ${method} ${path.split('?')[0]}: ${text.slice(0, 300)}`);
        const request = /urn:service:request:([0-9a-f-]+)/.exec(text)?.[1];
        if (request) serverErrors.push(request);
      }
      return { status: response.status, body: parsed, headers: response.headers };
    } catch {
      count('unanswered');
      return { status: 0, body: {}, headers: new Headers() };
    }
  };
  /** A read retried until the service answers it (outages pass). */
  const read = async (path: string, key: string, deadline: number): Promise<Answer> => {
    for (;;) {
      const answer = await call('GET', path, key);
      if (answer.status !== 0 && answer.status !== 503 && answer.status < 500) return answer;
      if (Date.now() > deadline) return answer;
      await sleep(500);
    }
  };

  // A monitor, created before any kill, checks its pages all through the run.
  const monitorLane = await startMonitorLane({ accounts: target.accounts, receiver, read, call: (method, path, key, body) => call(method, path, key, body) });

  const started = Date.now();
  const trafficEnds = started + options.durationMs;
  let stopped = false;

  // Fetch lanes: each counts its 200s and the calls that got no answer (a kill mid-request).
  const fetchState = { ok: 0, unanswered: 0, n: 0 };
  const fetchLane = async (): Promise<void> => {
    while (!stopped) {
      const url = `${site.url}/fetch/${fetchState.n++}`;
      const answer = await call('GET', `/v1/?apikey=${fetcher.key}&url=${encodeURIComponent(url)}`, null);
      if (answer.status === 200) fetchState.ok++;
      else if (answer.status === 0) {
        // The API is down (or was killed mid-call): wait as a client would before calling again.
        fetchState.unanswered++;
        await sleep(300);
      } else await sleep(answer.status === 503 || answer.status === 429 ? 300 : 50);
    }
  };

  /** Starts one piece of work with an Idempotency-Key, retrying like a client until it is accepted. */
  const idsByKey = new Map<string, Set<string>>();
  const startWithKey = async (key: string, path: string, apiKey: string, body: Json, idOf: (answer: Answer) => string | undefined, accepted: number[]): Promise<string | undefined> => {
    const deadline = trafficEnds + 60_000;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const answer = await call('POST', path, apiKey, body, { 'Idempotency-Key': key });
      if (accepted.includes(answer.status)) {
        const id = idOf(answer);
        if (!id) {
          problems.push(`${path} answered ${answer.status} without an id: ${JSON.stringify(answer.body).slice(0, 200)}`);
          return undefined;
        }
        const seen = idsByKey.get(key) ?? new Set<string>();
        seen.add(id);
        idsByKey.set(key, seen);
        return id;
      }
      if (answer.status >= 400 && answer.status < 500 && answer.status !== 409 && answer.status !== 429) {
        problems.push(`${path} refused with ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
        return undefined;
      }
      const retryAfter = Number(answer.headers.get('retry-after'));
      await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 5) * 1000 : 1_000);
    }
    return undefined;
  };

  const jobs: string[] = [];
  const jobTasks = options.jobTasks ?? 40;
  const jobLoop = async (): Promise<void> => {
    for (let n = 0; !stopped; n++) {
      const tasks = Array.from({ length: jobTasks }, (_, index) => ({ url: `${site.url}/job/${n}/${index}` }));
      const body = { tasks, webhook: { url: receiver.url(`/hook/${n}`) } };
      const id = await startWithKey(`chaos-${options.seed}-job-${n}`, '/v1/jobs', batcher.key, body, (answer) => answer.body.job_id as string | undefined, [200, 201]);
      if (id) jobs.push(id);
      const next = started + (n + 1) * (options.jobEveryMs ?? 8_000);
      while (!stopped && Date.now() < next) await sleep(100);
    }
  };

  const crawls: string[] = [];
  const crawlLoop = async (): Promise<void> => {
    for (let n = 0; !stopped; n++) {
      const body = { url: crawlSite.url, max_pages: options.crawlPages ?? 12 };
      const id = await startWithKey(`chaos-${options.seed}-crawl-${n}`, '/v1/crawls', crawler.key, body, (answer) => answer.body.crawl_id as string | undefined, [200, 202]);
      if (id) crawls.push(id);
      const next = started + (n + 1) * (options.crawlEveryMs ?? 15_000);
      while (!stopped && Date.now() < next) await sleep(100);
    }
  };

  // Kills: a seeded order, one per quarter, at a seeded moment inside its quarter's first two thirds.
  const order: ChaosComponent[] = ['worker', 'api', 'ferretdb', 'temporal'];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as ChaosComponent, order[i] as ChaosComponent];
  }
  const quarter = options.durationMs / order.length;
  const kills: KillRecord[] = [];
  const killLoop = async (): Promise<void> => {
    for (const [index, component] of order.entries()) {
      const at = started + index * quarter + quarter * (0.1 + 0.55 * random());
      while (Date.now() < at) await sleep(50);
      const pid = target.pid(component);
      if (!pid) {
        problems.push(`${component} had no process to kill`);
        continue;
      }
      process.kill(pid, 'SIGKILL');
      const record: KillRecord = { component, at: Date.now() - started, pid };
      kills.push(record);
      log(`killed ${component} (pid ${pid}) at ${(record.at / 1000).toFixed(1)} s`);
      const killedAt = Date.now();
      // Back: a new process of it runs and the API says ready. Give up after two minutes.
      while (Date.now() - killedAt < 120_000) {
        const now = target.pid(component);
        if (now !== undefined && now !== pid) {
          const ready = await fetch(`${target.api()}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
            (response) => response.status === 200,
            () => false,
          );
          if (ready) {
            record.backAfterMs = Date.now() - killedAt;
            break;
          }
        }
        await sleep(100);
      }
      log(record.backAfterMs === undefined ? `${component} never came back` : `${component} back after ${(record.backAfterMs / 1000).toFixed(1)} s`);
    }
  };

  const lanes = Array.from({ length: options.fetchLanes ?? 2 }, fetchLane);
  const loops = [jobLoop(), crawlLoop()];
  const killing = killLoop();
  while (Date.now() < trafficEnds) await sleep(100);
  stopped = true;
  await Promise.all([...lanes, ...loops, killing]);
  log(`traffic over: ${fetchState.ok} fetches answered 200, ${jobs.length} jobs and ${crawls.length} crawls accepted`);

  // Every accepted job and crawl must end; then the checks.
  const settleDeadline = Date.now() + (options.settleMs ?? 240_000);
  let stuck = 0;
  let lost = 0;
  const jobFigures = { tasks: 0, successful: 0 };
  const runIds = new Set<string>();
  for (const jobId of jobs) {
    let run: Json | undefined;
    for (;;) {
      const answer = await read(`/v1/jobs/${jobId}`, batcher.key, settleDeadline);
      run = answer.body.latest_run as Json | undefined;
      if (run && ['completed', 'failed', 'stopped'].includes(run.status as string)) break;
      if (Date.now() > settleDeadline) break;
      await sleep(500);
    }
    if (!run || !['completed', 'failed', 'stopped'].includes(run.status as string)) {
      stuck++;
      problems.push(`job ${jobId} did not end: ${JSON.stringify(run ?? null).slice(0, 300)}`);
      continue;
    }
    runIds.add(run.run_id as string);
    const stats = run.stats as Json;
    jobFigures.tasks += stats.total as number;
    jobFigures.successful += stats.successful as number;
    if (run.status !== 'completed') problems.push(`job ${jobId} ended ${run.status}: ${JSON.stringify(run).slice(0, 300)}`);
    // Each task once, with a real outcome; every page of the target answers, so every task succeeds.
    const statuses = new Map<string, number>();
    let cursor: string | undefined;
    const taskIds = new Set<string>();
    for (let page = 0; page < 1_000; page++) {
      const answer = await read(`/v1/jobs/${jobId}/results${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, batcher.key, settleDeadline + 60_000);
      if (answer.status !== 200) {
        problems.push(`results of ${jobId} answered ${answer.status}`);
        break;
      }
      for (const row of answer.body.results as Json[]) {
        taskIds.add(row.task_id as string);
        statuses.set(row.status as string, (statuses.get(row.status as string) ?? 0) + 1);
      }
      cursor = (answer.body.next_cursor as string | null) ?? undefined;
      if (!cursor) break;
    }
    const notDone = jobTasks - (statuses.get('successful') ?? 0);
    if (taskIds.size !== jobTasks) problems.push(`job ${jobId} has ${taskIds.size} distinct task results, not ${jobTasks}`);
    if (notDone > 0) {
      lost += notDone;
      problems.push(`job ${jobId}: ${notDone} of ${jobTasks} tasks without success (${JSON.stringify(Object.fromEntries(statuses))})`);
    }
  }

  const crawlFigures = { pagesFetched: 0 };
  for (const crawlId of crawls) {
    let crawl: Json | undefined;
    for (;;) {
      const answer = await read(`/v1/crawls/${crawlId}?limit=1`, crawler.key, settleDeadline);
      crawl = answer.body;
      if (answer.status === 200 && !['running', 'pending'].includes(crawl.status as string)) break;
      if (Date.now() > settleDeadline) break;
      await sleep(500);
    }
    if (!crawl || ['running', 'pending'].includes(crawl.status as string) || crawl.status === undefined) {
      stuck++;
      problems.push(`crawl ${crawlId} did not end: ${JSON.stringify(crawl ?? null).slice(0, 300)}`);
      continue;
    }
    if (crawl.status !== 'completed') problems.push(`crawl ${crawlId} ended ${crawl.status}: ${JSON.stringify(crawl).slice(0, 300)}`);
    crawlFigures.pagesFetched += (crawl.coverage as Json).pages_fetched as number;
  }

  // Run-end webhooks: each ended run's event arrives (retries may repeat it: receivers dedupe on event_id).
  const webhookDeadline = Date.now() + 90_000;
  const delivered = (): Set<string> => new Set(receiver.deliveries.map((delivery) => (JSON.parse(delivery.body.toString('utf8')) as Json).run_id as string));
  while (Date.now() < webhookDeadline && [...runIds].some((runId) => !delivered().has(runId))) await sleep(250);
  const arrived = delivered();
  for (const runId of runIds) if (!arrived.has(runId)) problems.push(`run ${runId} ended but its webhook never arrived`);
  const eventIds = receiver.deliveries.map((delivery) => (JSON.parse(delivery.body.toString('utf8')) as Json).event_id as string);
  const duplicateDeliveries = eventIds.length - new Set(eventIds).size;

  const monitored = await monitorLane.finish(settleDeadline + 60_000);
  problems.push(...monitored.problems);

  // One record per Idempotency-Key, and no more records than keys.
  for (const [key, seen] of idsByKey) if (seen.size > 1) problems.push(`Idempotency-Key ${key} answered ${seen.size} different ids: ${[...seen].join(', ')}`);
  const listed = async (path: string, key: string, field: string): Promise<number> => {
    const items = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const answer = await read(`${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key, Date.now() + 60_000);
      const rows = (answer.body.jobs ?? answer.body.crawls ?? answer.body.items ?? []) as Json[];
      for (const row of rows) items.add(row[field] as string);
      cursor = (answer.body.next_cursor as string | null | undefined) ?? undefined;
      if (!cursor) break;
    }
    return items.size;
  };
  const jobRecords = await listed('/v1/jobs', batcher.key, 'job_id');
  if (jobRecords !== jobs.length) problems.push(`the Batch account holds ${jobRecords} jobs for ${jobs.length} accepted keys`);
  const crawlRecords = await listed('/v1/crawls', crawler.key, 'crawl_id');
  if (crawlRecords !== crawls.length) problems.push(`the crawl account holds ${crawlRecords} crawls for ${crawls.length} accepted keys`);

  // Charges: each success billed once; what the API reports as used equals the ledger.
  const used = async (account: TestAccount): Promise<number> => (await target.accounts.charging.usage(account.accountId)).used;
  const charged = { fetch: await used(fetcher), jobs: await used(batcher), crawls: await used(crawler) };
  let doubleCharges = 0;
  if (charged.jobs !== jobFigures.successful) {
    doubleCharges += Math.max(0, charged.jobs - jobFigures.successful);
    problems.push(`Batch account charged ${charged.jobs} for ${jobFigures.successful} successful tasks`);
  }
  if (charged.crawls !== crawlFigures.pagesFetched) {
    doubleCharges += Math.max(0, charged.crawls - crawlFigures.pagesFetched);
    problems.push(`crawl account charged ${charged.crawls} for ${crawlFigures.pagesFetched} fetched pages`);
  }
  // A Fetch answered 200 is charged; one whose answer a kill cut off may or may not be.
  if (charged.fetch < fetchState.ok) problems.push(`Fetch account charged ${charged.fetch} for ${fetchState.ok} answers 200`);
  if (charged.fetch > fetchState.ok + fetchState.unanswered) {
    doubleCharges += charged.fetch - fetchState.ok - fetchState.unanswered;
    problems.push(`Fetch account charged ${charged.fetch} for ${fetchState.ok} answers 200 and ${fetchState.unanswered} unanswered calls`);
  }
  for (const [name, account] of Object.entries({ fetcher, batcher, crawler })) {
    const answer = await read('/v1/subscriptions/self/details', account.key, Date.now() + 60_000);
    const ledger = await used(account);
    if (answer.body.usage !== ledger) problems.push(`${name}: the API reports usage ${answer.body.usage}, the ledger ${ledger}`);
  }

  // No active-job slot outlives its job.
  const slots = await target.db.collection('active_jobs').countDocuments({ account_id: { $in: [batcher.accountId, crawler.accountId] } });
  if (slots > 0) problems.push(`${slots} active-job slots still held after every job and crawl ended`);

  for (const kill of kills) if (kill.backAfterMs === undefined) problems.push(`${kill.component} was not back within two minutes of its kill`);
  const fiveHundreds = Object.entries(answers)
    .filter(([status]) => Number(status) >= 500 && status !== '503')
    .reduce((sum, [, n]) => sum + n, 0);
  if (fiveHundreds > 0) problems.push(`${fiveHundreds} answers 5xx other than 503: ${JSON.stringify(answers)}`);
  // What the API logged of each of them, so that a rare one can be understood from the run that met it.
  const apiLines = target.apiLog?.().split('\n') ?? [];
  for (const request of serverErrors) problems.push(`request ${request}: ${apiLines.filter((line) => line.includes(request)).join(' | ').slice(0, 2000)}`);

  await Promise.all([site.close(), crawlSite.close(), receiver.close()]);
  return {
    seed: options.seed,
    kills,
    answers,
    fetch: { ok: fetchState.ok, unanswered: fetchState.unanswered, charged: charged.fetch },
    jobs: { accepted: jobs.length, tasks: jobFigures.tasks, successful: jobFigures.successful, charged: charged.jobs, webhooks: arrived.size, duplicateDeliveries },
    crawls: { accepted: crawls.length, pagesFetched: crawlFigures.pagesFetched, charged: charged.crawls },
    monitors: monitored.figures,
    problems,
    lost,
    doubleCharges,
    stuck,
    fiveHundreds,
  };
}
