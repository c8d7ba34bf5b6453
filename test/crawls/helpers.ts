/**
 * Crawls through the running service: an account made for the test, requests with its key, polling
 * until a crawl's results are final, and direct reads of what the crawl stored and billed.
 */
import { expect } from 'chai';
import { openAccounts, newAccount, type AccountsHandle, type TestAccount } from '../helpers/app';
import { crawlCollections, type CrawlCollections } from '../../core/crawls/store';
import { testStack } from '../helpers/stack';

let handle: AccountsHandle | undefined;

export async function accountsHandle(): Promise<AccountsHandle> {
  handle ??= await openAccounts();
  return handle;
}

after(async () => {
  await handle?.close();
  handle = undefined;
});

export async function crawlAccount(options: { credits?: number; keyCap?: number } = {}): Promise<TestAccount> {
  return newAccount((await accountsHandle()).accounts, { credits: options.credits ?? 1_000_000, ...(options.keyCap ? { keyCap: options.keyCap } : {}) });
}

export async function collections(): Promise<CrawlCollections> {
  return crawlCollections((await accountsHandle()).db.db);
}

/** Credits settled for the account this period (holds not counted). */
export async function creditsUsed(accountId: string): Promise<number> {
  return (await (await accountsHandle()).accounts.charging.usage(accountId)).used;
}

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

export class CrawlClient {
  constructor(readonly account: TestAccount) {}

  get api(): string {
    return testStack().urls.api;
  }

  async request(method: string, path: string, options: { body?: unknown; raw?: string; headers?: Record<string, string>; key?: string | null } = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== null) headers['X-API-Key'] = options.key ?? this.account.key;
    if (options.body !== undefined || options.raw !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${this.api}${path}`, {
      method,
      headers,
      ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    let body: Json = {};
    try {
      body = text ? (JSON.parse(text) as Json) : {};
    } catch {
      body = { text };
    }
    return { status: response.status, headers: response.headers, body };
  }

  start(body: Json, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request('POST', '/v1/crawls', { body, headers });
  }

  async started(body: Json): Promise<string> {
    const answer = await this.start(body);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    return answer.body.crawl_id as string;
  }

  read(crawlId: string, query: Record<string, string | number> = {}): Promise<Answer> {
    const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)])).toString();
    return this.request('GET', `/v1/crawls/${crawlId}${search ? `?${search}` : ''}`);
  }

  stop(crawlId: string): Promise<Answer> {
    return this.request('POST', `/v1/crawls/${crawlId}/stop`);
  }

  /** Polls until the crawl has ended, then reads every result until `next_cursor` is null. */
  async finish(crawlId: string, options: { limit?: number; timeoutMs?: number } = {}): Promise<{ crawl: Json; results: Json[]; reads: number }> {
    const deadline = Date.now() + (options.timeoutMs ?? 240_000);
    // A result read while the crawl runs may not be fetched yet (content_status pending): read them all once it has ended.
    await this.until(crawlId, (crawl) => crawl.status !== 'running', options.timeoutMs ?? 240_000);
    const results: Json[] = [];
    let cursor: string | undefined;
    let reads = 0;
    for (;;) {
      const answer = await this.read(crawlId, { ...(cursor ? { cursor } : {}), limit: options.limit ?? 1000 });
      reads++;
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      results.push(...(answer.body.results as Json[]));
      if (answer.body.next_cursor === null) return { crawl: answer.body, results, reads };
      expect(answer.body.next_cursor).to.be.a('string');
      cursor = answer.body.next_cursor as string;
      if (Date.now() > deadline) throw new Error(`crawl ${crawlId} did not finish: ${JSON.stringify({ ...answer.body, results: undefined })}`);
      if ((answer.body.results as Json[]).length === 0) await sleep(300);
    }
  }

  /** Polls the crawl until `check` holds. */
  async until(crawlId: string, check: (crawl: Json) => boolean, timeoutMs = 120_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await this.read(crawlId, { limit: 1 });
      if (check(answer.body)) return answer.body;
      if (Date.now() > deadline) throw new Error(`condition not met for ${crawlId}: ${JSON.stringify(answer.body)}`);
      await sleep(250);
    }
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const urlsOf = (results: Json[]): string[] => results.map((result) => result.url as string);
