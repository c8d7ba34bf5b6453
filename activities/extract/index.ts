/**
 * Domain preparation activities, at the service's own expense (nothing is billed): discovering the
 * domain's page kinds, fetching a sample of each kind in mode=auto into content-addressed snapshots,
 * inducing a role's recipe from one part of the sample and verifying it on the rest, and recording the
 * outcome. Activities take and return snapshot ids, never pages, so a retried or replayed step works
 * from the same bytes.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ALGORITHM_VERSION, type RoleRecipe } from '../../core/extract/recipe';
import {
  extractCollections,
  recipeId,
  SLOT_CONSUMED,
  type PreparationState,
  type RoleStatus,
} from '../../core/extract/store';
import {
  groupKinds,
  induceRole,
  pageLinks,
  pageUrls,
  robotsSitemaps,
  sameShape,
  sampleOrder,
  sitemapLocations,
  exampleRole,
  standardMapping,
  verifyRole,
  type Kind,
  type SamplePage,
} from '../../engine/extract';
import type { Discovery, Draft, FinishInput, RoleOutcome, Sample } from '../../core/extract/preparation';
import type { ActivityDeps } from '../deps';

export const EXTRACT_SNAPSHOTS = 'extract_snapshots';
const SAMPLE_PAGES = 14;
const DISCOVERY_PAGES = 40;
const SITEMAP_URLS = 5_000;
const MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024;

interface SnapshotDoc {
  _id: string;
  url: string;
  html: string;
  /** The page came from a browser (mode=auto needed rendering). */
  rendered: boolean;
  fetched_at: Date;
}

/** Enough of a page to learn from: an HTML body with words or structured data in it. */
const usable = (html: string): boolean =>
  html.length > 0 && (/<script[^>]+(ld\+json|application\/json)/i.test(html) || html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>|<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().length >= 40);

export function extractActivities(deps: ActivityDeps) {
  const { domains, recipes, slots } = extractCollections(deps.db);
  const snapshots = deps.db.collection<SnapshotDoc>(EXTRACT_SNAPSHOTS);

  /** Pages that answered 2xx but are not HTML (a PDF, an image): what makes a domain unsupported. */
  const notHtml = new Set<string>();

  /** A page in mode=auto, paid by the service; only 2xx HTML counts. Each page is a sign of life. */
  async function fetchHtml(url: string): Promise<{ html: string; finalUrl: string; rendered: boolean } | undefined> {
    const page = await deps.pageFetcher.fetch({ url, afford: async () => true });
    Context.current().heartbeat();
    if (!page.ok || page.status >= 300) return undefined;
    if (page.contentType && !/html|xml/i.test(page.contentType)) {
      notHtml.add(url);
      return undefined;
    }
    // Rendered configurations cost 5 or 25 credits; plain ones 1 or 10.
    return { html: page.html ?? page.body.toString('utf8'), finalUrl: page.finalUrl, rendered: page.credits === 5 || page.credits === 25 };
  }

  async function fetchText(url: string): Promise<string | undefined> {
    const page = await deps.pageFetcher.fetch({ url, afford: async () => true });
    Context.current().heartbeat();
    return page.ok && page.status < 300 ? page.body.toString('utf8') : undefined;
  }

  /** The first origin of the domain that answers: https, then http; www. when the bare name does not. */
  async function home(domain: string): Promise<{ html: string; finalUrl: string } | undefined> {
    for (const origin of [`https://${domain}`, `http://${domain}`, `https://www.${domain}`, `http://www.${domain}`]) {
      const page = await fetchHtml(`${origin}/`);
      if (page) return page;
    }
    return undefined;
  }

  async function sitemapUrls(origin: string): Promise<string[]> {
    const robots = await fetchText(`${origin}/robots.txt`);
    const queue = robots ? robotsSitemaps(robots) : [];
    if (queue.length === 0) queue.push(`${origin}/sitemap.xml`);
    const found: string[] = [];
    for (let index = 0; index < queue.length && index < 5 && found.length < SITEMAP_URLS; index++) {
      const xml = await fetchText(queue[index]!);
      if (!xml) continue;
      for (const location of sitemapLocations(xml)) {
        if (/<sitemapindex/i.test(xml)) queue.push(location);
        else found.push(location);
      }
    }
    return found.slice(0, SITEMAP_URLS);
  }

  /** Snapshots of up to `limit` pages in the attempt's order, concurrently a few at a time. */
  async function snapshot(urls: readonly string[], limit: number): Promise<{ ids: string[]; unusable: number; rendered: number }> {
    const ids: string[] = [];
    let unusable = 0;
    let rendered = 0;
    const queue = [...urls];
    const worker = async () => {
      while (ids.length < limit) {
        const url = queue.shift();
        if (url === undefined) return;
        const page = await fetchHtml(url);
        if (!page || !usable(page.html) || page.html.length > MAX_SNAPSHOT_BYTES) {
          unusable++;
          continue;
        }
        const id = createHash('sha256').update(page.finalUrl).update('\0').update(page.html).digest('hex');
        await snapshots.updateOne({ _id: id }, { $setOnInsert: { url: page.finalUrl, html: page.html, rendered: page.rendered, fetched_at: new Date() } }, { upsert: true });
        ids.push(id);
        if (page.rendered) rendered++;
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    return { ids: ids.slice(0, limit).sort(), unusable, rendered };
  }

  async function pages(ids: readonly string[]): Promise<SamplePage[]> {
    if (ids.length === 0) return [];
    const found = await snapshots.find({ _id: { $in: [...ids] } }).toArray();
    const byId = new Map(found.map((doc) => [doc._id, doc]));
    return ids.flatMap((id) => {
      const doc = byId.get(id);
      return doc ? [{ url: doc.url, html: doc.html }] : [];
    });
  }

  return {
    async extractSetState(domain: string, state: PreparationState, roles?: RoleStatus[]): Promise<void> {
      await domains.updateOne({ _id: domain, status: 'preparing' }, { $set: { state, updated_at: new Date(), ...(roles ? { roles } : {}) } });
    },

    /** Kinds from the sitemaps, else from links found from the home page (two levels, bounded). */
    async extractDiscover(domain: string): Promise<Discovery> {
      const start = await home(domain);
      if (!start) return { ok: false, code: 'unpreparable', detail: `No page of ${domain} answered with usable HTML (https and http tried).` };
      const origin = new URL(start.finalUrl).origin;
      let urls = pageUrls(domain, await sitemapUrls(origin));
      if (groupKinds(urls).length === 0) {
        const seen = new Set<string>([start.finalUrl]);
        let frontier = pageUrls(domain, pageLinks(start.html, start.finalUrl));
        const found = new Set(frontier);
        for (let depth = 0; depth < 2 && seen.size < DISCOVERY_PAGES; depth++) {
          const next: string[] = [];
          for (const url of frontier) {
            if (seen.size >= DISCOVERY_PAGES || seen.has(url)) continue;
            seen.add(url);
            const page = await fetchHtml(url);
            if (!page) continue;
            for (const link of pageUrls(domain, pageLinks(page.html, page.finalUrl))) {
              if (found.has(link)) continue;
              found.add(link);
              next.push(link);
            }
          }
          frontier = next;
        }
        urls = [...found].sort();
      }
      const kinds = groupKinds(urls);
      if (kinds.length === 0) {
        return { ok: false, code: 'discovery_failed', detail: `Found ${urls.length} page(s) on ${domain} but no kind of page with enough of them; resubmit with example_urls.` };
      }
      return { ok: true, kinds };
    },

    /** One kind per example URL, its siblings found among the example's links and the sitemap. */
    async extractExamples(domain: string, examples: string[]): Promise<Discovery> {
      const origin = new URL(examples[0]!).origin;
      // Siblings come from the sitemap, the home page and the pages it links to (bounded).
      const known = new Set(pageUrls(domain, await sitemapUrls(origin)));
      const start = await fetchHtml(`${origin}/`);
      if (start) {
        const linked = pageUrls(domain, pageLinks(start.html, start.finalUrl));
        for (const link of linked) known.add(link);
        for (const link of linked.filter((link) => !examples.some((example) => sameShape(example, link))).slice(0, 10)) {
          const page = await fetchHtml(link);
          if (page) for (const found of pageUrls(domain, pageLinks(page.html, page.finalUrl))) known.add(found);
        }
      }
      const fromSitemap = [...known];
      const kinds: Kind[] = [];
      const taken = new Set<string>();
      let answered = 0;
      for (const example of examples) {
        const page = await fetchHtml(example);
        if (page) answered++;
        const links = page ? pageUrls(domain, pageLinks(page.html, page.finalUrl)) : [];
        const siblings = [...new Set([example, ...links, ...fromSitemap])].filter((url) => sameShape(example, url)).sort();
        const role = exampleRole(example, taken);
        taken.add(role);
        kinds.push({ role, urls: [example, ...siblings.filter((url) => url !== example)] });
      }
      if (answered === 0 && examples.every((example) => notHtml.has(example))) {
        return { ok: false, code: 'unsupported', detail: 'The example URLs answer with documents that are not HTML (Extract reads web pages).' };
      }
      if (answered === 0) return { ok: false, code: 'unpreparable', detail: 'None of the example URLs answered with usable HTML.' };
      return { ok: true, kinds };
    },

    /** Fetches the attempt's sample of a kind and splits it: about 60% to induce from, the rest to verify on. */
    async extractSample(domain: string, kind: Kind, attempt: number): Promise<Sample> {
      const ordered = sampleOrder(kind.urls, `${domain}|${kind.role}|${attempt}`);
      const { ids, unusable, rendered } = await snapshot(ordered, SAMPLE_PAGES);
      const ordering = sampleOrder(ids, `${domain}|${kind.role}|${attempt}|split`);
      const cut = Math.ceil(ordering.length * 0.6);
      return { role: kind.role, induce: ordering.slice(0, cut), verify: ordering.slice(cut), unusable, rendered: rendered * 2 > ids.length };
    },

    async extractInduce(sample: Sample): Promise<Draft> {
      if (sample.induce.length === 0) return { ok: false, reason: 'unusable', detail: `No sampled page gave usable HTML (${sample.unusable} tried).` };
      const induced = induceRole(sample.role, await pages(sample.induce), sample.rendered ? 'browser' : 'http');
      return induced.ok ? { ok: true, role: induced.role } : { ok: false, reason: induced.reason, detail: induced.detail };
    },

    async extractVerify(draft: Omit<RoleRecipe, 'minSimilarity'>, verifyIds: string[]): Promise<RoleOutcome> {
      const verified = verifyRole(draft, await pages(verifyIds));
      if (!verified.ok) return { ok: false, role: draft.role, url: draft.url, reason: verified.reason === 'too_few_pages' ? 'too_few_pages' : 'not_verified', detail: verified.detail };
      const standard = standardMapping(verified.role.fields);
      return { ok: true, recipe: { ...verified.role, ...(standard ? { standard } : {}) }, detail: verified.detail };
    },

    /** Writes the recipe (a new version) and the final record; a failure that returns the slot says so. */
    async extractFinish(input: FinishInput): Promise<void> {
      const now = new Date();
      const record = await domains.findOne({ _id: input.domain });
      if (!record || record.status !== (input.refresh ? 'ready' : 'preparing')) return;
      const roles: RoleStatus[] = input.outcomes.map((outcome) =>
        outcome.ok
          ? { role: outcome.recipe.role, status: 'ready', url: outcome.recipe.url, detail: outcome.detail }
          : { role: outcome.role, status: 'failed', url: outcome.url, detail: outcome.detail },
      );
      const ready = input.outcomes.flatMap((outcome) => (outcome.ok ? [outcome.recipe] : []));
      if (!input.failure && ready.length > 0) {
        const version = (record.recipe_version ?? 0) + 1;
        const verticals = ready.some((role) => role.standard) ? ['real_estate'] : [];
        await recipes.updateOne(
          { _id: recipeId(input.domain, version) },
          { $setOnInsert: { domain: input.domain, version, algorithm: ALGORITHM_VERSION, created_at: now.toISOString(), verticals, roles: ready } },
          { upsert: true },
        );
        await domains.updateOne(
          { _id: input.domain },
          { $set: { status: 'ready', state: 'ready', roles, recipe_version: version, verticals, updated_at: now }, $unset: { failure: '', refresh_failure: '' } },
        );
        return;
      }
      if (input.refresh) {
        const failure = input.failure ?? { code: 'preparation_exhausted' as const, detail: 'No extraction could be verified.' };
        await domains.updateOne({ _id: input.domain }, { $set: { refresh_failure: { ...failure, at: now } } });
        return;
      }
      const failure = input.failure ?? { code: 'preparation_exhausted' as const, detail: 'No extraction could be verified.' };
      const slotConsumed = SLOT_CONSUMED[failure.code];
      await domains.updateOne(
        { _id: input.domain },
        { $set: { status: 'failed', state: 'failed', roles, failure: { code: failure.code, detail: failure.detail, slot_consumed: slotConsumed }, updated_at: now } },
      );
      if (!slotConsumed) await slots.updateOne({ _id: record.started_by }, { $set: { returned: true } });
    },
  };
}
