/**
 * One slice of a crawl: fetch a bounded list of pages, take the links of those opened, claim the new
 * URLs in the seen-set and store them, in order, as this slice's found URLs; store kept pages' HTML
 * and their fetch outcomes; bill the pages. Every write is an insert keyed so that a retried attempt
 * (after a crash or a kill) neither duplicates nor bills twice:
 *
 *   items (found parts of earlier slices) ─> fetch pages ─> links ─> normalize, scope, patterns, dedup
 *     ─> claim in crawl_urls (unique) ─> crawl_found parts (keyed by attempt) ─> outcomes ─> settle bill
 *
 * A retried attempt first loads the URLs its slice already claimed (they stay its own) and whether
 * the slice was billed (then it bills nothing). An attempt cancelled before its pages were all
 * fetched (its heartbeats no longer reached the server, the worker shuts down) writes nothing of its
 * outcomes nor its bill and throws: the next attempt fetches the slice, and bills it, whole.
 */
import type { CrawlCharges } from '../charges';
import { admitLink, linkRules, opensAt } from '../link-rules';
import { startKey } from '../urls';
import { duplicateIndexes, insertIgnoringDuplicates, isDuplicateKey } from '../../../base/db';
import { storeKeptPage } from '../kept-pages';
import { changeMarks, crawlCollections, ids, outcomeMarks, type ContentStatus, type ResultChange, type UrlDoc } from '../store';
import { FOUND_PART, OUTCOME_BLOCK, type SliceInput, type SliceResult } from '../types';
import type { Accounts } from '../../accounts';
import type { Db } from 'mongodb';
import { interruption, WorkFailure, type WorkContext } from '../../jobs/work';
import { TaskSignals } from '../../../base/task-signals';
import { fetchPage, forEachLimited, type PageOutcome, type PageRunner, type WorkItem } from './pages';
import type { CrawlRuntime } from './runtime';
import type { CrawlChanges } from '../../changes/crawls';
import { failedPage } from '../../webhooks/crawl-events';
import type { CrawlAnnouncer } from './webhooks';

export interface SliceDeps {
  db: Db;
  accounts: Accounts;
  charges: CrawlCharges;
  runtime: CrawlRuntime;
  /** Crawls with track_changes record their results here (core/changes). */
  changes: CrawlChanges;
  /** The crawl's webhook events (absent: none are sent). */
  announcer?: CrawlAnnouncer;
}

const CLAIM_BATCH = 1_000;

export async function runSlice(deps: SliceDeps, input: SliceInput, work: WorkContext): Promise<SliceResult> {
  const { attempt } = work;
  const retried = attempt > 1;
  const { spec, k } = input;
  const heartbeat = setInterval(() => work.heartbeat(), 2_000);
  const signals = new TaskSignals(work.signal);
  try {
    if (k === 0) await deps.announcer?.started(spec);
    const items = k === 0 ? [{ url: spec.url, depth: 0, open: true }] : await loadItems(deps, input);
    const own = retried ? await ownClaims(deps, spec.crawlId, k) : new Map<string, UrlDoc>();
    const payer = await deps.accounts.principalFor(spec.accountId, spec.keyId);
    const bill = await deps.charges.open(spec.crawlId, k, payer, retried, items.length);
    const outcomes: PageOutcome[] = items.map(() => ({ status: 'pending', credits: 0 }));
    let refused = false;
    const crawl = deps.runtime.crawl(spec.crawlId, input.tuning.concurrency);
    const runner: PageRunner = {
      fetcher: deps.runtime.fetcher,
      crawlLimit: crawl.limit,
      retryAfterMaxMs: deps.runtime.retryAfterMaxMs,
      ended: () => deps.runtime.ended(spec.crawlId),
      reuseKey: spec.accountId,
      ...(spec.respectRobots ? { respectRobots: true } : {}),
      ...(deps.runtime.documents ? { documents: { pool: deps.runtime.documents, include: spec.includeDocuments !== false, ...(spec.outputFormat ? { output: spec.outputFormat } : {}) } } : {}),
      heartbeat: () => work.heartbeat(),
    };
    try {
      const stop = async (): Promise<boolean> => refused || work.signal.aborted || (await runner.ended());
      await forEachLimited(items, input.tuning.concurrency, stop, async (item, index) => {
        const keepHtml = Boolean(spec.outputFormat && item.src);
        const tracked = Boolean(spec.trackChanges && item.src);
        // Each page its own signal: dozens of fetches must not all listen on the activity's.
        const pageSignal = signals.open();
        const outcome = await fetchPage({ ...runner, signal: pageSignal.signal }, item, bill, keepHtml, tracked).finally(pageSignal.done);
        if (outcome.refused) refused = true;
        if (outcome.page && item.src && outcome.status === 'fetched') {
          const { page } = outcome;
          outcome.change = await deps.changes.recordPage(
            { crawlId: spec.crawlId, accountId: spec.accountId, ...(spec.changeTag !== undefined ? { tag: spec.changeTag } : {}) },
            item.url,
            ids.contentId(item.src.k, item.src.index),
            { ...page, ...(page.html !== undefined ? { rendered: true } : {}), fetchedAt: new Date() },
          );
        }
        delete outcome.page;
        if (outcome.html !== undefined && item.src) {
          await storeKeptPage(deps.db, spec.crawlId, ids.contentId(item.src.k, item.src.index), { url: item.url, html: outcome.html, ...(outcome.document ? { document: outcome.document } : {}) });
        }
        delete outcome.html;
        delete outcome.document;
        outcomes[index] = outcome;
      });
    } finally {
      crawl.done();
    }
    // Pages cut short by the cancellation ended as failures of ours, not of the site: not outcomes.
    if (work.signal.aborted) {
      throw interruption(work.signal, `slice ${k} of crawl ${spec.crawlId} was interrupted before its pages were fetched`);
    }

    const claimed = await claimLinks(deps, input, items, outcomes, own);
    await writeFound(deps, spec.crawlId, k, attempt, claimed.found);
    // Pages robots.txt disallowed are recorded as skipped even when the crawl keeps no pages.
    if (spec.outputFormat || spec.trackChanges || outcomes.some((outcome) => outcome.status === 'skipped' || outcome.status === 'skipped_document')) await writeOutcomes(deps, input, items, outcomes);
    const credits = outcomes.reduce((sum, outcome) => sum + outcome.credits, 0);
    await bill.settle(bill.alreadyBilled ? 0 : credits);
    // Told once the slice's outcomes are stored: a retried attempt finds each page's event written.
    await deps.announcer?.pagesFailed(
      spec,
      outcomes.flatMap((outcome, index) => (outcome.status === 'failed' && items[index] ? [failedPage(items[index].url, outcome)] : [])),
    );

    const fetched = outcomes.filter((outcome) => outcome.status === 'fetched' || outcome.status === 'failed').length;
    const failed = outcomes.filter((outcome) => outcome.status === 'failed').length;
    const seed = k === 0 ? seedVerdict(outcomes[0]) : undefined;
    return {
      k,
      attempt,
      found: claimed.found.length,
      foundDepth: (items[0]?.depth ?? 0) + 1,
      fetched,
      failed,
      duplicates: claimed.duplicates,
      credits: bill.alreadyBilled ? 0 : credits,
      skipped: outcomes.length - fetched,
      refused,
      halted: await deps.runtime.ended(spec.crawlId),
      ...(seed ? { seed } : {}),
    };
  } finally {
    clearInterval(heartbeat);
    signals.close();
  }
}

function seedVerdict(outcome: PageOutcome | undefined): SliceResult['seed'] {
  if (outcome?.status === 'fetched') return { ok: true };
  if (outcome?.status === 'pending') return { ok: false, detail: 'The crawl ended before the start URL was fetched.' };
  if (outcome?.status === 'skipped_document') return { ok: false, detail: 'The start URL is a document and the crawl skips documents (include_documents=false).' };
  if (outcome?.status === 'skipped') return { ok: false, detail: `The start URL is not fetched: ${outcome.detail ?? 'robots.txt disallows it.'}` };
  return { ok: false, detail: outcome?.detail ? `The start URL could not be read: ${outcome.detail}` : 'The start URL could not be read.' };
}

async function loadItems(deps: SliceDeps, input: SliceInput): Promise<WorkItem[]> {
  const { found } = crawlCollections(deps.db);
  const items: WorkItem[] = [];
  for (const range of input.ranges) {
    for (let part = Math.floor(range.from / FOUND_PART); part * FOUND_PART < range.to; part++) {
      const doc = await found.findOne({ _id: ids.found(input.spec.crawlId, range.k, range.a, part) });
      if (!doc) throw new WorkFailure('crawl_part_missing', `found part ${part} of slice ${range.k} is missing`);
      for (let index = Math.max(range.from, part * FOUND_PART); index < Math.min(range.to, (part + 1) * FOUND_PART); index++) {
        const url = doc.urls[index - part * FOUND_PART];
        const depth = doc.depths[index - part * FOUND_PART] ?? range.depth;
        const linked = doc.fetch?.[index - part * FOUND_PART];
        if (url === undefined) continue;
        items.push({ url, ...(linked ? { fetch: linked } : {}), depth, src: { k: range.k, index }, open: opensAt(depth, input.spec.depth) });
      }
    }
  }
  return items;
}

/** URLs an earlier attempt of this slice claimed: they are this slice's, not duplicates. */
async function ownClaims(deps: SliceDeps, crawlId: string, k: number): Promise<Map<string, UrlDoc>> {
  const docs = await crawlCollections(deps.db).urls.find({ crawl_id: crawlId, slice: k }).toArray();
  return new Map(docs.map((doc) => [doc._id, doc]));
}

async function claimLinks(
  deps: SliceDeps,
  input: SliceInput,
  items: WorkItem[],
  outcomes: PageOutcome[],
  own: Map<string, UrlDoc>,
): Promise<{ found: Found[]; duplicates: number }> {
  const { spec, k } = input;
  const rules = linkRules(spec.url, { include: spec.include, exclude: spec.exclude, includeDocuments: spec.includeDocuments !== false });
  const start = startKey(spec.url);
  const seen = deps.runtime.seen(spec.crawlId);
  const local = new Set<string>();
  const candidates: Array<{ key: string; doc: UrlDoc }> = [];
  let duplicates = 0;
  outcomes.forEach((outcome, index) => {
    if (!outcome.links) return;
    const depth = (items[index]?.depth ?? 0) + 1;
    for (const href of outcome.links.hrefs) {
      // Out of scope, outside the patterns, or a document's name when the crawl skips documents: no result.
      const link = admitLink(href, outcome.links.base, rules);
      if (!link.ok) continue;
      if (link.key === start || local.has(link.key)) {
        duplicates++;
        continue;
      }
      local.add(link.key);
      const id = ids.url(spec.crawlId, link.key);
      if (!own.has(id) && seen.has(link.key)) {
        duplicates++;
        continue;
      }
      candidates.push({ key: link.key, doc: { _id: id, crawl_id: spec.crawlId, url: link.url, ...(link.fetch !== link.url ? { fetch: link.fetch } : {}), depth, slice: k } });
    }
    delete outcome.links;
  });
  const found: Found[] = [];
  const { urls } = crawlCollections(deps.db);
  for (let from = 0; from < candidates.length; from += CLAIM_BATCH) {
    const batch = candidates.slice(from, from + CLAIM_BATCH);
    let taken = new Set<number>();
    try {
      await urls.insertMany(batch.map((candidate) => candidate.doc), { ordered: false });
    } catch (error) {
      taken = duplicateIndexes(error);
    }
    batch.forEach((candidate, index) => {
      seen.add(candidate.key);
      if (taken.has(index) && !own.has(candidate.doc._id)) duplicates++;
      else found.push([candidate.doc.url, candidate.doc.depth, candidate.doc.fetch ?? '']);
    });
  }
  // URLs an earlier attempt claimed but this one did not meet again stay this slice's.
  const met = new Set(candidates.map((candidate) => candidate.doc._id));
  for (const doc of own.values()) if (!met.has(doc._id)) found.push([doc.url, doc.depth, doc.fetch ?? '']);
  return { found, duplicates };
}

/** A found URL: presented form, depth, and the linked form when it differs ('' when not). */
type Found = [string, number, string];

async function writeFound(deps: SliceDeps, crawlId: string, k: number, attempt: number, found: Found[]): Promise<void> {
  const docs = [];
  for (let part = 0; part * FOUND_PART < found.length; part++) {
    const slice = found.slice(part * FOUND_PART, (part + 1) * FOUND_PART);
    const linked = slice.some(([, , fetch]) => fetch !== '');
    docs.push({
      _id: ids.found(crawlId, k, attempt, part),
      crawl_id: crawlId,
      urls: slice.map(([url]) => url),
      depths: slice.map(([, depth]) => depth),
      ...(linked ? { fetch: slice.map(([, , fetch]) => fetch) } : {}),
    });
  }
  await insertIgnoringDuplicates(crawlCollections(deps.db).found, docs);
}

/** One outcome document per block of results fetched here (ranges start on block boundaries). */
async function writeOutcomes(deps: SliceDeps, input: SliceInput, items: WorkItem[], outcomes: PageOutcome[]): Promise<void> {
  const blocks = new Map<string, { statuses: ContentStatus[]; changes: Array<ResultChange | undefined> }>();
  items.forEach((item, index) => {
    if (!item.src) return;
    const block = Math.floor(item.src.index / OUTCOME_BLOCK);
    const id = ids.outcome(input.spec.crawlId, item.src.k, block);
    const marks = blocks.get(id) ?? { statuses: [], changes: [] };
    marks.statuses[item.src.index % OUTCOME_BLOCK] = outcomes[index]?.status ?? 'pending';
    marks.changes[item.src.index % OUTCOME_BLOCK] = outcomes[index]?.change;
    blocks.set(id, marks);
  });
  const { outcomes: collection } = crawlCollections(deps.db);
  for (const [id, marks] of blocks) {
    const doc = { crawl_id: input.spec.crawlId, s: outcomeMarks.encode(marks.statuses), ...(input.spec.trackChanges ? { c: changeMarks.encode(marks.changes) } : {}) };
    try {
      await collection.insertOne({ _id: id, ...doc });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await collection.replaceOne({ _id: id }, doc);
    }
  }
}
