/**
 * The pages of one check, as one long step (a WorkContext: heartbeats, cancellation): each page
 * fetched and recorded once (`monitor_pages`, insert-once, written by the part: a retried attempt
 * skips the parts done, and a part cut short is fetched again, change tracking's `origin` answering
 * what its first attempt stored),
 * billed per part of PART_SIZE pages through the job kernel's charges (core/jobs/charges.ts: one hold
 * and one marker per part, so a part is billed once whatever is retried; only pages fetched are
 * billed). A crawl-based monitor finds its pages as it goes, breadth first from the start page, by the
 * crawl's own rules (core/crawls/link-rules.ts: domain scope, `include_patterns`, `exclude_patterns`,
 * `include_documents`, `depth`; URLs deduplicated as a crawl does), the start page and at most
 * `max_items` results, never more than `max_pages` pages; the links of a part's pages are taken in the
 * part's order once it is done, so the pages found do not depend on which fetch ended first.
 * A page the last completed check found is `removed` when this one did not find it, or when it answers
 * 404 or 410 (then it is that, not also `failed`); a page failing otherwise is `failed` and stays one of
 * the monitor's pages.
 */
import type { Accounts, Principal } from '../accounts';
import { isAccountsError } from '../accounts';
import { insertIgnoringDuplicates } from '../../base/db';
import type { PendingRecord } from '../changes';
import { admitLink, linkRules, opensAt, type LinkRules } from '../crawls/link-rules';
import { extractLinks } from '../crawls/links';
import { startKey } from '../crawls/urls';
import { JobCharges, type SliceBill } from '../jobs/charges';
import { interruption, WorkFailure, type WorkContext } from '../jobs/work';
import { checkPage, type PageCheckDeps } from './page-check';
import { crawlPages, monitorTag, pageId, partId, type CheckDoc, type MonitorDoc, type MonitorStore, type PageDoc } from './store';
import { readList } from './lists';
import { pagesById, REMOVED_PART, storedCheck } from './stored';

/** Pages billed under one hold and marker, read and written together (a Batch slice's size). */
export const PART_SIZE = 250;
/** Pages of a check fetched at once. */
const LANES = 4;

export type PagesOutcome = { ok: true } | { ok: false; reason: string; detail: string };

export interface PagesDeps extends PageCheckDeps {
  store: MonitorStore;
  accounts: Accounts;
}

interface Target {
  /** The page as presented (its record, its events). */
  url: string;
  /** The form the site linked it in, when it differs: what is requested. */
  fetch?: string;
  depth: number;
}

/** A page's links its crawl admits, as linked (absolute), each once. */
function admittedLinks(html: string, pageUrl: string, rules: LinkRules): string[] {
  const { base, hrefs } = extractLinks(html, pageUrl);
  const found = new Set<string>();
  for (const href of hrefs) {
    const link = admitLink(href, base, rules);
    if (link.ok) found.add(link.fetch);
  }
  return [...found];
}

export function checkPages(deps: PagesDeps) {
  const { store } = deps;
  const charges = new JobCharges(store.db, deps.accounts, { charges: store.charges, holdPrefix: 'monitor' });

  return async function runPages(checkId: string, work: WorkContext): Promise<PagesOutcome> {
    const check = await store.checks.findOne({ _id: checkId });
    if (!check || check.status !== 'running') return { ok: true };
    const monitor = await store.monitors.findOne({ _id: check.monitor_id });
    if (!monitor || monitor.status === 'deleted') return { ok: false, reason: 'monitor_deleted', detail: 'The monitor was deleted during the check.' };
    let payer: Principal;
    try {
      payer = await deps.accounts.principalFor(monitor.account_id, monitor.key_id);
    } catch (error) {
      if (!isAccountsError(error)) throw error;
      return { ok: false, reason: 'subscription_inactive', detail: `The monitor's account or API key can no longer run checks: ${error.message}` };
    }
    const stored = await storedCheck(store, checkId);
    const done = new Map<string, PageDoc>(stored.pages.map((page) => [page.url, page]));
    const partsDone = new Map(stored.parts.filter((doc) => doc.part !== REMOVED_PART).map((doc) => [doc.part, doc]));
    const crawl = monitor.crawl;
    const rules = crawl ? linkRules(crawl.url, { include: crawl.include_patterns ?? [], exclude: crawl.exclude_patterns ?? [], includeDocuments: crawl.include_documents !== false }) : undefined;
    // A crawl's pages keep their links (the next pages); a URL monitor folds the pages found the same into its parts.
    const fold = !crawl;
    const queue: Target[] = crawl ? [{ url: crawl.url, depth: 0 }] : (await readList(store, monitor._id, 'urls')).map((url) => ({ url, depth: 0 }));
    // URLs met, by the crawl's key (a link back to the start page is the start page).
    const seen = new Set(crawl ? [startKey(crawl.url)] : []);
    const limit = crawl ? crawlPages(crawl) : queue.length;
    // The pages the last check found: one of them answering 404 or 410 now is removed.
    const lastUrls = await readList(store, monitor._id, 'last');
    const listed = new Set(lastUrls);
    let refused: string | undefined;
    let processed = 0;

    const enqueue = (page: PageDoc, depth: number): void => {
      if (!rules) return;
      for (const link of page.links ?? []) {
        if (queue.length >= limit) return;
        // A stored link is taken again by the same rules, for its key and presented form.
        const admitted = admitLink(link, link, rules);
        if (!admitted.ok || seen.has(admitted.key)) continue;
        seen.add(admitted.key);
        queue.push({ url: admitted.url, ...(admitted.fetch !== admitted.url ? { fetch: admitted.fetch } : {}), depth: depth + 1 });
      }
    };

    for (let part = 0; processed < queue.length && !refused; part++) {
      const targets = queue.slice(processed, processed + PART_SIZE);
      const earlier = partsDone.get(part);
      if (earlier) {
        // Stored whole by an earlier attempt: billed, or billed now.
        const bill = await charges.open(checkId, part, payer, true, 0);
        const credits = earlier.same_credits + targets.reduce((sum, target) => sum + (done.get(target.url)?.credits ?? 0), 0);
        if (!bill.alreadyBilled && credits > 0) await bill.need(credits);
        await bill.settle(bill.alreadyBilled ? 0 : credits);
        for (const url of earlier.same_urls) done.set(url, { _id: pageId(checkId, url), check_id: checkId, monitor_id: monitor._id, url, change: 'same', credits: 0, fetched_at: new Date(), previous_fetched_at: null, diff: null });
        // A crawl's next pages are the links of this part's pages, as when it was first walked.
        for (const target of targets) {
          const page = done.get(target.url);
          if (page) enqueue(page, target.depth);
        }
        processed += targets.length;
        continue;
      }
      // One reservation for the part's plain fetches up front, as a Batch slice makes (a ledger write each otherwise).
      const bill = await charges.open(checkId, part, payer, work.attempt > 1, targets.filter((target) => !done.has(target.url)).length);
      const owed = targets.reduce((sum, target) => sum + (done.get(target.url)?.credits ?? 0), 0);
      if (!bill.alreadyBilled && owed > 0) await bill.need(owed);
      // The part's tracks in one read, its pages stored in one write at its end.
      const todo = targets.filter((target) => !done.has(target.url));
      const pending = new Map(deps.recorder.beginMany(todo.map((target) => ({ accountId: monitor.account_id, url: target.fetch ?? target.url, tag: monitorTag(monitor._id) }))).map((one, k) => [(todo[k] as Target).url, one]));
      const fresh: PageDoc[] = [];
      let index = 0;
      const lane = async (): Promise<void> => {
        while (index < targets.length && !refused) {
          const target = targets[index++] as Target;
          if (work.signal.aborted) throw interruption(work.signal, 'the check was interrupted');
          const stored = done.get(target.url);
          const page = stored ?? (await fetchOne(monitor, check, target, bill, pending.get(target.url)));
          if (page === 'refused') {
            refused = 'insufficient_credits';
            return;
          }
          if (!stored) fresh.push(page);
          done.set(target.url, page);
          work.heartbeat({ pages: done.size });
        }
      };
      await Promise.all(Array.from({ length: LANES }, lane));
      const same = fold ? fresh.filter((page) => page.change === 'same') : [];
      const kept = fold ? fresh.filter((page) => page.change !== 'same') : fresh;
      const clashes = await insertIgnoringDuplicates(store.pages, kept);
      // Another attempt stored some of these pages first: its records stand.
      if (clashes.size > 0) {
        const theirs = await pagesById(store, [...clashes].map((k) => (kept[k] as PageDoc)._id));
        for (const page of theirs) done.set(page.url, page);
      }
      // After its pages: a part that is written has every page it lists.
      await insertIgnoringDuplicates(store.parts, [
        {
          _id: partId(checkId, part),
          check_id: checkId,
          part,
          same_urls: same.map((page) => page.url),
          same_credits: same.reduce((sum, page) => sum + page.credits, 0),
          page_ids: targets.flatMap((target) => {
            const page = done.get(target.url);
            return page && (!fold || page.change !== 'same') ? [page._id] : [];
          }),
          at: new Date(),
        },
      ]);
      // The next pages, in the part's order (the stored records, where another attempt's stand).
      for (const target of targets) {
        const page = done.get(target.url);
        if (page) enqueue(page, target.depth);
      }
      processed += targets.length;
      const credits = targets.reduce((sum, target) => sum + (done.get(target.url)?.credits ?? 0), 0);
      await bill.settle(bill.alreadyBilled ? 0 : credits);
    }
    if (refused) return { ok: false, reason: refused, detail: 'The account has no credits left for this check.' };
    // Pages the last check found and this one did not: gone (those answering 404 or 410 are recorded removed already).
    const gone = lastUrls.filter((url) => !done.has(url));
    const removed: PageDoc[] = gone.map((url) => ({
      _id: pageId(checkId, `removed|${url}`),
      check_id: checkId,
      monitor_id: monitor._id,
      url,
      change: 'removed',
      credits: 0,
      fetched_at: new Date(),
      previous_fetched_at: null,
      diff: null,
    }));
    await insertIgnoringDuplicates(store.pages, removed);
    await insertIgnoringDuplicates(store.parts, [{ _id: partId(checkId, REMOVED_PART), check_id: checkId, part: REMOVED_PART, same_urls: [], same_credits: 0, page_ids: removed.map((page) => page._id), at: new Date() }]);
    return { ok: true };

    async function fetchOne(monitorDoc: MonitorDoc, checkDoc: CheckDoc, target: Target, bill: SliceBill, pendingRecord: PendingRecord | undefined): Promise<PageDoc | 'refused'> {
      let reserved = 0;
      const outcome = await checkPage(deps, {
        accountId: monitorDoc.account_id,
        monitorId: monitorDoc._id,
        url: target.fetch ?? target.url,
        outputs: monitorDoc.outputs,
        origin: `${checkDoc._id}|${target.url}`,
        baseline: checkDoc.baseline,
        respectRobots: monitorDoc.crawl !== null && monitorDoc.crawl.respect_robots !== false,
        signal: work.signal,
        ...(pendingRecord ? { pending: pendingRecord } : {}),
        afford: async (credits) => {
          if (credits <= reserved) return true;
          const ok = await bill.need(credits - reserved);
          if (ok) reserved = credits;
          return ok;
        },
      });
      if (!outcome.ok && outcome.interrupted) throw new WorkFailure('interrupted', `the fetch of ${target.url} was interrupted`);
      if (!outcome.ok && outcome.code === 'payment_required') return 'refused';
      const credits = outcome.ok ? outcome.credits : 0;
      if (reserved > credits) bill.giveBack(reserved - credits);
      const page: PageDoc = outcome.ok
        ? {
            _id: pageId(checkDoc._id, target.url),
            check_id: checkDoc._id,
            monitor_id: monitorDoc._id,
            url: target.url,
            change: outcome.recorded.status,
            credits,
            fetched_at: outcome.recorded.stored ? outcome.recorded.version.fetchedAt : new Date(),
            previous_fetched_at: outcome.recorded.previous?.fetchedAt ?? null,
            diff: outcome.recorded.status === 'changed' && outcome.recorded.diff ? { text: outcome.recorded.diff.text, fields: outcome.recorded.diff.fields } : null,
            ...(rules && opensAt(target.depth, monitorDoc.crawl?.depth) ? { links: admittedLinks(outcome.html, outcome.finalUrl, rules) } : {}),
          }
        : {
            _id: pageId(checkDoc._id, target.url),
            check_id: checkDoc._id,
            monitor_id: monitorDoc._id,
            url: target.url,
            // A listed page that is gone is removed, one change; any other failure leaves it the monitor's.
            change: (outcome.status === 404 || outcome.status === 410) && listed.has(target.url) ? 'removed' : 'failed',
            credits: 0,
            fetched_at: new Date(),
            previous_fetched_at: null,
            diff: null,
            error: `${outcome.code}: ${outcome.detail}`.slice(0, 500),
          };
      return page;
    }
  };
}

export type CheckPages = ReturnType<typeof checkPages>;
