/**
 * Crawl commands: everything the Crawl surface does, from MongoDB and Temporal (the workflow is
 * started and signalled, never queried). The API validates a request, calls one command and presents
 * what it returns; the MCP tools call the same commands.
 *
 *   start ─> start URL check ─> idempotency claim (reserves the crawl id) ─> credits probe ─> startJob:
 *         active-job slot ─> crawl document ─> workflow `crawl-<id>` (core/jobs/start.ts: a failure gives
 *         both back; a start cut short is finished by the key's retry or by the reconciler)
 *   stop  ─> recordEnd (first end wins, slot given back) ─> signal (only makes the stop prompt)
 *   read, list, content, download items ─> CrawlReader (never the workflow)
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { refusalError, type Accounts, type Principal } from '../accounts';
import type { Config } from '../../base/config';
import { problem } from '../../base/errors';
import { newId } from '../../base/ids';
import type { Logger } from '../../base/log';
import { ActiveJobs } from '../jobs/active-jobs';
import { IdempotencyKeys, MAX_IDEMPOTENCY_KEY_LENGTH, type Claimed } from '../jobs/idempotency';
import { checkIdempotencyKey, idempotent, type IdempotencyWords } from '../jobs/idempotent';
import { startJob } from '../jobs/start';
import { crawlStartPlan } from './starts';
import { decodeListCursor, decodeResultCursor, encodeListCursor, encodeResultCursor, START } from './cursor';
import { CrawlEnds, recordEnd } from './ends';
import { crawlJobChecker } from './jobs';
import { CrawlReader, type CrawlView, type ResultItem } from './read';
import { ids, newCrawlDocument, type CrawlEndDoc, type ResultChange } from './store';
import { checkPublicStartUrl, checkStartBody, type StartBody, type StartUrlCheck } from './body';
import { checkCrawlWebhook, type CrawlWebhookUrlCheck } from './webhook';
import type { HmacKeys } from '../webhooks/hmac-keys';
import { createWebhookEvents, type EventWithAttempts } from '../webhooks/events';
import type { CrawlWebhook } from './types';
import { crawlWorkflowId, STOP_CRAWL_SIGNAL } from '../jobs/workflow-names';

export const DEFAULT_READ_LIMIT = 1000;
/** Events a crawl's deliveries listing shows, newest first: as many as Batch's shows runs. */
const DELIVERY_EVENTS = 20;

/** Crawl's words for idempotency refusals, as its clients know them. */
const crawlIdempotencyWords: IdempotencyWords = (refusal) =>
  refusal === 'invalid_key'
    ? problem('invalid_request', `The Idempotency-Key header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`)
    : refusal === 'in_flight'
      ? problem('idempotency_request_in_flight', 'A request with this Idempotency-Key is still in progress; retry when it ends.')
      : problem('idempotency_key_reused', 'This Idempotency-Key was used with a different body.');
const DOWNLOAD_PAGE = 1000;
/** Stored pages read per look-up while a download streams. */
const CONTENT_BATCH = 100;

export type { StartBody, StartUrlCheck } from './body';

export interface CrawlCommandDeps {
  db: Db;
  accounts: Accounts;
  temporal: { client: Client };
  log: Logger;
  config: Pick<Config, 'temporalTaskQueue' | 'crawlDefaultMaxItems' | 'crawlDefaultMaxPages' | 'crawlSlicePages' | 'crawlSliceWindow' | 'crawlConcurrency' | 'crawlHistoryEvents'>;
  checkTarget: StartUrlCheck;
  /** Checks a webhook's URL; absent: a crawl with a webhook cannot start here (MCP over stdio wires it too). */
  checkWebhookUrl?: CrawlWebhookUrlCheck;
  hmacKeys?: HmacKeys;
}

/** One page of a crawl's results: the crawl, its items, and where the next read starts (null: all read). */
export interface ResultsPage {
  view: CrawlView;
  items: ResultItem[];
  nextCursor: string | null;
}

/** One line of a download: a result, with its page when the crawl keeps pages (a document as converted), and its change status when it tracks changes. */
export type DownloadItem = ({ url: string } | { url: string; status: 'pending' | 'failed' } | { url: string; status: 'fetched'; html: string; document?: string }) & { change?: ResultChange | 'removed' };

export function createCrawlCommands(deps: CrawlCommandDeps) {
  const reader = new CrawlReader(deps.db);
  const ends = new CrawlEnds(deps.db);
  const activeJobs = new ActiveJobs(deps.db, { crawl: crawlJobChecker(deps.db) });
  const idempotency = new IdempotencyKeys(deps.db, 'crawl');
  const webhookEvents = createWebhookEvents(deps.db);

  const view = async (crawlId: string, accountId: string): Promise<CrawlView> => {
    const found = /^c_[0-9a-z]{1,40}$/.test(crawlId) ? await reader.load(crawlId, accountId) : null;
    if (!found) throw problem('crawl_not_found', `No crawl ${crawlId} on this account.`);
    return found;
  };

  /**
   * Starts crawl `crawlId` (a new id, or the one an idempotency claim reserved: a retry that took over
   * a dead request's claim finishes that request's crawl, whose document may exist already).
   */
  const create = async (principal: Principal, body: StartBody, domain: string, webhook: CrawlWebhook | undefined, crawlId: string, claim?: Claimed): Promise<string> => {
    const { config, accounts, temporal } = deps;
    const { crawls } = reader.collections;
    const earlier = claim?.takenOver ? await crawls.findOne({ _id: crawlId }) : null;
    if (!earlier) {
      const probe = await accounts.charging.tryReserve(principal, 1);
      if ('refused' in probe) throw refusalError(probe.refused, 'crawl', principal);
      await probe.release();
    }
    const doc =
      earlier ??
      newCrawlDocument({
        _id: crawlId,
        account_id: principal.accountId,
        key_id: principal.keyId,
        // As the URL standard writes it (scheme and host lower-cased, default port dropped): what `format: uri` promises on the way out.
        url: new URL(body.url.trim()).href,
        domain,
        ...(body.depth !== undefined ? { depth: body.depth } : {}),
        max_items: body.max_items ?? config.crawlDefaultMaxItems,
        max_pages: body.max_pages ?? config.crawlDefaultMaxPages,
        include_patterns: body.include_patterns ?? [],
        exclude_patterns: body.exclude_patterns ?? [],
        ...(webhook ? { webhook } : {}),
        ...(body.output_format ? { output_format: body.output_format } : {}),
        ...(body.main_content === true ? { main_content: true } : {}),
        respect_robots: body.respect_robots !== false,
        ...(body.track_changes === true ? { track_changes: true, ...(body.change_tracking_tag !== undefined ? { change_tracking_tag: body.change_tracking_tag } : {}) } : {}),
        ...(body.include_documents === false ? { include_documents: false as const } : {}),
      });
    await startJob(
      { db: deps.db, client: temporal.client },
      crawlStartPlan({ db: deps.db, activeJobs, config }, doc, principal.plan.activeJobs, claim ? { id: claim.id, owned: claim.owned } : undefined),
    );
    return crawlId;
  };

  async function* allResults(crawl: CrawlView): AsyncGenerator<ResultItem> {
    let position = START;
    for (;;) {
      const page = await reader.results(crawl, position, DOWNLOAD_PAGE);
      yield* page.items;
      if (page.exhausted || page.items.length === 0) return;
      position = page.next;
    }
  }

  return {
    view,

    /**
     * Starts a crawl (or finds the one this `Idempotency-Key` started) and returns its id. Anything
     * refused starts nothing and costs nothing.
     */
    async start(principal: Principal, body: StartBody, idempotencyKey: string | undefined): Promise<string> {
      const key = checkIdempotencyKey(idempotencyKey, crawlIdempotencyWords);
      checkStartBody(body);
      const domain = await checkPublicStartUrl(body.url, deps.checkTarget);
      const webhook = body.webhook ? await checkCrawlWebhook(deps, principal.accountId, body.webhook) : undefined;
      const started = await idempotent(
        idempotency,
        crawlIdempotencyWords,
        { accountId: principal.accountId, key, body, reserve: () => newId('c') },
        {
          replay: async (crawlId) => crawlId,
          // Nothing was started when this throws (the start gave back what it took): the key is free again.
          run: async (claim) => {
            const crawlId = await create(principal, body, domain, webhook, claim?.recordId || newId('c'), claim);
            return { value: crawlId, resultId: crawlId };
          },
        },
      );
      return started.value;
    },

    /** Stops a running crawl (idempotent: an ended crawl answers its final state). */
    async stop(crawlId: string, accountId: string): Promise<CrawlEndDoc> {
      const crawl = await view(crawlId, accountId);
      if (crawl.end) return { _id: crawlId, ...crawl.end };
      const end = await recordEnd({ ends, activeJobs }, crawlId, { status: 'stopped', stop_reason: 'user' }).catch(async (error: unknown) => {
        // The end is what the caller needs; a slot left behind is reclaimed by the active-job check.
        const recorded = await ends.read(crawlId);
        if (!recorded) throw error;
        return recorded;
      });
      // The record already stops the crawl (slices check it); the signal only makes it prompt.
      await deps.temporal.client.workflow
        .getHandle(crawlWorkflowId(crawlId))
        .signal(STOP_CRAWL_SIGNAL)
        .catch((error: unknown) => deps.log.warn('crawl stop signal not delivered', { crawl_id: crawlId, error }));
      return end;
    },

    /** The crawl's newest webhook events, each with every delivery attempt (404 for another account's crawl). */
    async deliveries(crawlId: string, accountId: string): Promise<EventWithAttempts[]> {
      const crawl = await view(crawlId, accountId);
      return webhookEvents.forCrawl(crawl.doc._id, DELIVERY_EVENTS);
    },

    /** The crawl with up to `limit` results from `cursor`. */
    async read(crawlId: string, accountId: string, cursor: string | undefined, limit: number = DEFAULT_READ_LIMIT): Promise<ResultsPage> {
      const crawl = await view(crawlId, accountId);
      let position = START;
      if (cursor !== undefined) {
        const decoded = decodeResultCursor(crawlId, cursor);
        if (!decoded.ok) {
          throw problem('invalid_cursor', decoded.reason === 'other_crawl' ? 'This cursor belongs to another crawl.' : 'This cursor is not a cursor of this crawl.');
        }
        position = decoded.position;
      }
      const page = await reader.results(crawl, position, limit);
      const finished = page.exhausted && crawl.settled;
      return { view: crawl, items: page.items, nextCursor: finished ? null : encodeResultCursor(crawlId, page.next) };
    },

    /** The account's crawls, newest first, `limit` from `cursor`. */
    async list(accountId: string, cursor: string | undefined, limit: number): Promise<{ crawls: CrawlView[]; nextCursor?: string }> {
      let before: string | undefined;
      if (cursor !== undefined) {
        before = decodeListCursor(cursor);
        if (!before) throw problem('invalid_request', '`cursor` is not a cursor of this list.');
      }
      const docs = await reader.collections.crawls
        .find({ account_id: accountId, ...(before ? { _id: { $lt: before } } : {}) })
        .sort({ _id: -1 })
        .limit(limit + 1)
        .toArray();
      const page = docs.slice(0, limit);
      const crawls = await Promise.all(page.map((doc) => reader.view(doc)));
      const last = page[page.length - 1];
      return { crawls, ...(docs.length > limit && last ? { nextCursor: encodeListCursor(last._id) } : {}) };
    },

    /** One kept page of a crawl with `output_format`. */
    async content(crawlId: string, accountId: string, contentId: string): Promise<{ view: CrawlView; url: string; html: string; document?: string }> {
      const crawl = await view(crawlId, accountId);
      const content = crawl.doc.output_format ? await reader.content(crawl.doc._id, contentId) : null;
      if (!content) throw problem('content_not_found', 'This page was not fetched yet, its fetch failed, or the crawl keeps no HTML.');
      return { view: crawl, ...content };
    },

    /**
     * Every published result, with its page when the crawl keeps pages: results first (bounded by
     * max_items), then their stored pages by computed id, then what has no page.
     */
    async *download(crawl: CrawlView): AsyncGenerator<DownloadItem> {
      const crawlId = crawl.doc._id;
      const change = (item: ResultItem): { change?: ResultChange | 'removed' } => (item.changeStatus ? { change: item.changeStatus } : {});
      // A tracked crawl's removed URLs come after every result (read.ts lists them last).
      const removed: ResultItem[] = [];
      if (!crawl.doc.output_format) {
        for await (const item of allResults(crawl)) {
          if (item.changeStatus === 'removed') removed.push(item);
          else yield { url: item.url, ...change(item) };
        }
        for (const item of removed) yield { url: item.url, change: 'removed' };
        return;
      }
      const results = new Map<string, { url: string; status: string; change?: ResultChange | 'removed' }>();
      for await (const item of allResults(crawl)) {
        if (item.changeStatus === 'removed') removed.push(item);
        else results.set(ids.contentId(item.k, item.index), { url: item.url, status: item.contentStatus ?? 'pending', ...change(item) });
      }
      const fetched = [...results].filter(([, result]) => result.status === 'fetched').map(([contentId]) => contentId);
      for (let from = 0; from < fetched.length; from += CONTENT_BATCH) {
        const batch = fetched.slice(from, from + CONTENT_BATCH);
        for (const [contentId, page] of await reader.pages(crawlId, batch)) {
          const result = results.get(contentId);
          if (!result) continue;
          yield { url: result.url, status: 'fetched', html: page.html, ...(page.document ? { document: page.document } : {}), ...(result.change ? { change: result.change } : {}) };
          results.delete(contentId);
        }
      }
      for (const result of results.values()) {
        // A page marked fetched whose HTML is missing is reported failed rather than without content.
        yield { url: result.url, status: result.status === 'pending' ? 'pending' : 'failed', ...(result.change ? { change: result.change } : {}) };
      }
      for (const item of removed) yield { url: item.url, change: 'removed' };
    },
  };
}

export type CrawlCommands = ReturnType<typeof createCrawlCommands>;
