/**
 * How a preparation opens pages: through the crawl's own machinery (core/crawls/work): its page
 * runner in mode=auto, the installation's host gate shared with every job, robots.txt (a page it
 * disallows is not opened), `Retry-After`, and its link extraction. Nothing is billed: preparation is at the service's expense. Each usable page
 * is kept as a content-addressed snapshot, so a retried or replayed step works from the same bytes.
 */
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import type { SliceBill } from '../../crawls/charges';
import type { PageLinks } from '../../crawls/links';
import { isHtml, pageStructure, type PageStructure, type SamplePage } from '../../../engine';
import type { CrawlRuntime } from '../../crawls/work/runtime';
import { fetchPage } from '../../crawls/work/pages';
import { interruption, type WorkContext } from '../../jobs/work';
import { Semaphore } from '../../../base/semaphore';

export const EXTRACT_SNAPSHOTS = 'extract_snapshots';
const MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024;
/** Pages of one preparation fetched at once by a worker. */
const CONCURRENCY = 4;

interface SnapshotDoc {
  _id: string;
  url: string;
  html: string;
  /** The page came from a browser (mode=auto needed rendering). */
  rendered: boolean;
  fetched_at: Date;
}

export interface Snapshot {
  id: string;
  url: string;
  html: string;
  rendered: boolean;
}

export type Opened =
  | { ok: true; page: Snapshot; structure: PageStructure; links?: PageLinks }
  /** `notHtml`: the page answered, but with a document that is not a web page (a PDF, an image). */
  | { ok: false; notHtml: boolean };

/** Enough of a page to learn from: an HTML body with words or structured data in it. */
export const usable = (html: string): boolean =>
  html.length > 0 &&
  (/<script[^>]+(ld\+json|application\/json)/i.test(html) || html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>|<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().length >= 40);

const FREE: SliceBill = { alreadyBilled: false, need: async () => true, giveBack: () => undefined, settle: async () => undefined };

/** `current`: the step running now (each preparation step is its own activity), for its signal and heartbeats. */
export function preparationPages(db: Db, runtime: CrawlRuntime, current: () => WorkContext) {
  const snapshots = db.collection<SnapshotDoc>(EXTRACT_SNAPSHOTS);
  const limit = new Semaphore(CONCURRENCY);

  /** Opens a page as a crawl would; `links` when asked to (the crawl's link extraction). */
  async function open(url: string, withLinks = false): Promise<Opened> {
    const context = current();
    const outcome = await fetchPage(
      {
        fetcher: runtime.fetcher,
        crawlLimit: limit,
        respectRobots: true,
        retryAfterMaxMs: runtime.retryAfterMaxMs,
        ended: async () => false,
        signal: context.signal,
        // Every page is a sign of life: a killed worker's step is retried elsewhere within the heartbeat timeout.
        heartbeat: () => context.heartbeat(),
      },
      { url, depth: 0, open: withLinks },
      FREE,
      true,
    );
    // A page cut short by the step's cancellation says nothing of the site: the step must run again,
    // not judge the domain on pages it never read.
    if (context.signal.aborted) throw interruption(context.signal, `opening ${url} was interrupted`);
    const html = outcome.html;
    if (outcome.status !== 'fetched' || (outcome.httpStatus ?? 500) >= 300) return { ok: false, notHtml: false };
    // With neither a type nor a text there is nothing to judge: not a page, but not another kind of document either.
    const answer = { ...(outcome.contentType ? { contentType: outcome.contentType } : {}), ...(html !== undefined ? { body: html } : {}) };
    if ((answer.contentType !== undefined || answer.body !== undefined) && !isHtml(answer)) return { ok: false, notHtml: true };
    if (html === undefined || !usable(html) || html.length > MAX_SNAPSHOT_BYTES) return { ok: false, notHtml: false };
    const finalUrl = outcome.finalUrl ?? url;
    // Rendered configurations cost 5 or 25 credits; plain ones 1 or 10.
    const rendered = outcome.credits === 5 || outcome.credits === 25;
    const id = createHash('sha256').update(finalUrl).update('\0').update(html).digest('hex');
    await snapshots.updateOne({ _id: id }, { $setOnInsert: { url: finalUrl, html, rendered, fetched_at: new Date() } }, { upsert: true });
    return { ok: true, page: { id, url: finalUrl, html, rendered }, structure: pageStructure(html, finalUrl), ...(outcome.links ? { links: outcome.links } : {}) };
  }

  /** A text resource (a sitemap): read as is, not kept. */
  async function text(url: string): Promise<string | undefined> {
    const page = await runtime.fetcher.fetch({ url, afford: async () => true });
    current().heartbeat();
    return page.ok && page.status < 300 ? page.body.toString('utf8') : undefined;
  }

  async function load(ids: readonly string[]): Promise<Snapshot[]> {
    if (ids.length === 0) return [];
    const found = await snapshots.find({ _id: { $in: [...ids] } }).toArray();
    const byId = new Map(found.map((doc) => [doc._id, doc]));
    return ids.flatMap((id) => {
      const doc = byId.get(id);
      return doc ? [{ id, url: doc.url, html: doc.html, rendered: doc.rendered }] : [];
    });
  }

  const samples = async (ids: readonly string[]): Promise<SamplePage[]> => (await load(ids)).map(({ url, html }) => ({ url, html }));

  return { open, text, load, samples };
}

export type PreparationPages = ReturnType<typeof preparationPages>;
