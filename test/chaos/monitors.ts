/**
 * Monitors in the chaos drive: one monitor checked every 2 seconds (the test stack's minimum) on pages
 * that change now and then, its checks running through every kill. Afterwards: no check is left
 * running, every check that ended sent one event per change (de-duplicated by event id: deliveries are
 * at least once) and one end event, and the account was charged exactly the credits its checks report.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Accounts } from '../../core/accounts';
import type { WebhookReceiver } from '../fixtures/webhook-receiver';
import { newAccount, type TestAccount } from '../helpers/app';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface MonitorLaneDeps {
  accounts: Accounts;
  receiver: WebhookReceiver;
  /** A call retried until the service answers (outages pass). */
  read(path: string, key: string, deadline: number): Promise<{ status: number; body: Json }>;
  /** One call, answered or not (status 0). */
  call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: Json }>;
}

export interface MonitorFigures {
  checks: number;
  completed: number;
  skipped: number;
  changes: number;
  events: number;
  charged: number;
}

const PAGES = 6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pages whose text changes every `everyMs` (one page at a time, in turn). */
async function startChangingSite(everyMs: number): Promise<{ url(k: number): string; close(): Promise<void> }> {
  const started = Date.now();
  const server = http.createServer((req, res) => {
    const k = Number((req.url ?? '/0').slice(1)) || 0;
    const tick = Math.floor((Date.now() - started) / everyMs);
    // Page k changes on the ticks where it is k's turn: its version is how many of those have passed.
    const version = Math.floor((tick + PAGES - k) / PAGES);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(`<html><body><h1>Item ${k}</h1><p class="price">$${100 + version}.00</p><p>Generated at ${new Date().toISOString()}</p></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (k) => `http://127.0.0.1:${port}/${k}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startMonitorLane(deps: MonitorLaneDeps) {
  const site = await startChangingSite(7_000);
  const account: TestAccount = await newAccount(deps.accounts, { credits: 10_000_000 });
  const created = await deps.call('POST', '/v1/monitors', account.key, {
    name: 'chaos',
    urls: Array.from({ length: PAGES }, (_, k) => site.url(k)),
    schedule: { every: 2, unit: 'second' },
    css_extractor: { price: '.price' },
    webhook: { url: deps.receiver.url('/monitor') },
  });
  if (created.status !== 201) throw new Error(`the chaos monitor was refused: ${created.status} ${JSON.stringify(created.body)}`);
  const monitorId = created.body.monitor_id as string;

  return {
    /** Stops the monitor's checks, waits for them to end and their events to arrive; answers the problems found. */
    async finish(deadline: number): Promise<{ problems: string[]; figures: MonitorFigures }> {
      const problems: string[] = [];
      for (;;) {
        const paused = await deps.call('POST', `/v1/monitors/${monitorId}/pause`, account.key);
        if (paused.status === 200 || Date.now() > deadline) break;
        await sleep(500);
      }
      const checks: Json[] = [];
      for (;;) {
        checks.length = 0;
        let cursor: string | undefined;
        for (let page = 0; page < 100; page++) {
          const answer = await deps.read(`/v1/monitors/${monitorId}/checks?limit=100${cursor ? `&cursor=${cursor}` : ''}`, account.key, deadline);
          checks.push(...((answer.body.checks ?? []) as Json[]));
          cursor = (answer.body.next_cursor as string | null | undefined) ?? undefined;
          if (!cursor) break;
        }
        if (checks.every((check) => check.status !== 'running') || Date.now() > deadline) break;
        await sleep(1_000);
      }
      for (const check of checks) if (check.status === 'running') problems.push(`monitor check ${check.check_id} did not end`);
      for (const check of checks) if (check.status === 'failed') problems.push(`monitor check ${check.check_id} failed: ${check.failure_reason} ${check.failure_detail}`);
      const ended = checks.filter((check) => check.status === 'completed');
      const expected = (check: Json): number => (check.baseline ? 1 : check.new + check.changed + check.removed + 1);
      const eventsOf = (): Map<string, Json[]> => {
        const unique = new Map<string, Json>();
        for (const delivery of deps.receiver.deliveries) {
          if (delivery.path !== '/monitor') continue;
          const event = JSON.parse(delivery.body.toString('utf8')) as Json;
          unique.set(event.event_id as string, event);
        }
        const byCheck = new Map<string, Json[]>();
        for (const event of unique.values()) byCheck.set(event.check_id as string, [...(byCheck.get(event.check_id as string) ?? []), event]);
        return byCheck;
      };
      const eventsDeadline = Date.now() + 90_000;
      while (Date.now() < eventsDeadline && ended.some((check) => (eventsOf().get(check.check_id as string)?.length ?? 0) < expected(check))) await sleep(250);
      const byCheck = eventsOf();
      let changes = 0;
      for (const check of ended) {
        const events = byCheck.get(check.check_id as string) ?? [];
        const pages = events.filter((event) => String(event.event_type).startsWith('monitor.page.'));
        const urls = new Set(pages.map((event) => event.url as string));
        changes += check.baseline ? 0 : check.new + check.changed + check.removed;
        if (events.length !== expected(check)) problems.push(`monitor check ${check.check_id} sent ${events.length} events for ${expected(check)} (${JSON.stringify(check)})`);
        if (urls.size !== pages.length) problems.push(`monitor check ${check.check_id} sent two events for one page`);
      }
      const charged = (await deps.accounts.charging.usage(account.accountId)).used;
      const reported = checks.reduce((sum, check) => sum + (check.credits as number), 0);
      if (charged !== reported) problems.push(`the monitor account was charged ${charged} for checks reporting ${reported} credits`);
      await deps.call('DELETE', `/v1/monitors/${monitorId}`, account.key);
      await site.close();
      return {
        problems,
        figures: {
          checks: checks.length,
          completed: ended.length,
          skipped: checks.filter((check) => check.status === 'skipped').length,
          changes,
          events: [...byCheck.values()].reduce((sum, events) => sum + events.length, 0),
          charged,
        },
      };
    },
  };
}
