/**
 * Discovery: which kinds of page a domain has, without examples. Its URLs come from robots.txt's
 * sitemaps (the engine's robots.txt reader, whose rules the crawl also respects) and from a bounded crawl from the home page with the crawl's own machinery (link
 * extraction, URL normalisation and scope, politeness); the crawl takes every shape of link in turn,
 * so a few dozen pages reach every kind. The pages it fetched, and a few more of each group of URLs it
 * did not reach, are compared by structure (engine/extract/kinds.ts). With example URLs, each example
 * is a kind and its siblings are the URLs of the same shape found the same way.
 */
import { normalizeLink, scopeOf, type UrlScope } from '../../crawls/urls';
import type { Discovery } from '../preparation';
import { exampleKind, chromeOf, kindsOf, looksLikePage, preparationSeed, sampleOrder, shapeBalanced, shapeOf, sitemapLocations, type Kind, type PageStructure, type RobotsReader } from '../../../engine';
import { forEachLimited } from '../../crawls/work/pages';
import type { Opened, PreparationPages } from './pages';

export const SITEMAP_URLS = 5_000;
export const SITEMAP_FILES = 5;
/**
 * Pages the discovery crawl fetches at most, and how many links deep it goes. A sitemap already lists
 * the pages: the crawl then only looks for kinds the sitemap leaves out (search pages often are).
 */
export const CRAWL_PAGES = 30;
export const CRAWL_PAGES_WITH_SITEMAP = 10;
export const CRAWL_DEPTH = 3;
/** Each group of URLs is judged on at least this many of its pages (when it has them). */
export const PAGES_PER_GROUP = 3;
export const TOP_UP_PAGES = 24;
const CONCURRENCY = 4;
/** Pages linked from the home page read for the examples' siblings. */
export const EXAMPLE_HUBS = 10;

interface Seen {
  structures: PageStructure[];
  /** URL → snapshot id of every page fetched. */
  fetched: Record<string, string>;
  /** URLs tried that gave nothing usable (not found, not HTML, empty). */
  unusable: Set<string>;
}

/**
 * The URLs of one discovery, each with the path it was first met with (a sitemap's `<loc>`, a link's
 * `href`), which is what is fetched: twins (`/about` and `/about/`, `http:` and `https:`, `www.`) are
 * one URL by the crawl's key, but a site whose paths end in `/` may answer 404 without it.
 */
class LinkForms {
  private readonly first = new Map<string, string>();
  constructor(private readonly scope: UrlScope) {}

  /** The first-met form of each page link among `hrefs` (resolved against `base`), without repeats. */
  pages(hrefs: Iterable<string>, base: string): string[] {
    const out = new Set<string>();
    for (const href of hrefs) {
      const link = normalizeLink(href, base, this.scope);
      if (!link.ok || !looksLikePage(link.fetch)) continue;
      if (!this.first.has(link.key)) this.first.set(link.key, link.fetch);
      out.add(this.first.get(link.key)!);
    }
    return [...out];
  }
}

/** `seed`: the installation's sample seed (engine/extract/sampling.ts), empty when unset. */
export function discovery(pages: PreparationPages, robots: Pick<RobotsReader, 'rules'>, seed = '') {
  /** The first origin of the domain that answers: https, then http; www. when the bare name does not. */
  async function home(domain: string): Promise<Extract<Opened, { ok: true }> | undefined> {
    for (const origin of [`https://${domain}`, `http://${domain}`, `https://www.${domain}`, `http://www.${domain}`]) {
      const page = await pages.open(`${origin}/`, true);
      if (page.ok) return page;
    }
    return undefined;
  }

  async function sitemapUrls(origin: string): Promise<string[]> {
    const queue = [...(await robots.rules(origin)).sitemaps];
    if (queue.length === 0) queue.push(`${origin}/sitemap.xml`);
    const found: string[] = [];
    for (let index = 0; index < queue.length && index < SITEMAP_FILES && found.length < SITEMAP_URLS; index++) {
      const xml = await pages.text(queue[index]!);
      if (!xml) continue;
      for (const location of sitemapLocations(xml)) {
        if (/<sitemapindex/i.test(xml)) queue.push(location);
        else found.push(location);
      }
    }
    return found.slice(0, SITEMAP_URLS);
  }

  /** Fetches `urls` a few at a time, recording each page; returns the links of those opened. */
  async function visit(urls: readonly string[], seen: Seen, forms: LinkForms, withLinks: boolean): Promise<string[]> {
    const links: string[] = [];
    await forEachLimited([...urls], CONCURRENCY, async () => false, async (url) => {
      const page = await pages.open(url, withLinks);
      if (!page.ok) {
        seen.unusable.add(url);
        return;
      }
      seen.fetched[url] = page.page.id;
      seen.structures.push({ ...page.structure, url });
      if (page.links) links.push(...forms.pages(page.links.hrefs, page.links.base));
    });
    return links;
  }

  /** Kinds from the sitemaps and a bounded crawl from the home page. */
  async function discover(domain: string): Promise<Discovery> {
    const start = await home(domain);
    if (!start) return { ok: false, code: 'unpreparable', detail: `No page of ${domain} answered with usable HTML (https and http tried).` };
    const forms = new LinkForms(scopeOf(start.page.url));
    const seen: Seen = { structures: [start.structure], fetched: {}, unusable: new Set() };
    const visited = new Set(forms.pages([start.page.url], start.page.url));
    const known = new Set(forms.pages(await sitemapUrls(new URL(start.page.url).origin), start.page.url));
    const budget = known.size > 0 ? CRAWL_PAGES_WITH_SITEMAP : CRAWL_PAGES;
    let frontier = start.links ? forms.pages(start.links.hrefs, start.links.base) : [];
    for (let depth = 1; depth <= CRAWL_DEPTH && frontier.length > 0 && visited.size < budget; depth++) {
      for (const url of frontier) known.add(url);
      const next = shapeBalanced(frontier.filter((url) => !visited.has(url)), budget - visited.size, preparationSeed(seed, domain, 'crawl', depth));
      for (const url of next) visited.add(url);
      frontier = (await visit(next, seen, forms, depth < CRAWL_DEPTH)).filter((url) => !visited.has(url));
    }
    for (const url of frontier) known.add(url);

    // Every group of URLs is judged on a few of its own pages, fetched now if the crawl did not reach them.
    const groups = new Map<string, string[]>();
    for (const url of [...known].sort()) groups.set(shapeOf(url).key, [...(groups.get(shapeOf(url).key) ?? []), url]);
    const topUp: string[] = [];
    for (const key of [...groups.keys()].sort()) {
      const group = groups.get(key)!;
      const have = group.filter((url) => seen.fetched[url] !== undefined).length;
      if (group.length >= PAGES_PER_GROUP && have < PAGES_PER_GROUP) {
        topUp.push(...sampleOrder(group.filter((url) => seen.fetched[url] === undefined), preparationSeed(seed, domain, 'structure')).slice(0, PAGES_PER_GROUP - have));
      }
    }
    await visit(topUp.slice(0, TOP_UP_PAGES), seen, forms, false);

    const kinds = kindsOf([...known], seen.structures, seen.unusable).map((kind) => withFetched(kind, seen.fetched));
    if (kinds.length === 0) {
      return { ok: false, code: 'discovery_failed', detail: `Found ${known.size} page(s) on ${domain} but no kind of page with enough of them; resubmit with example_urls.` };
    }
    return { ok: true, kinds };
  }

  /** One kind per example URL, its siblings found among the sitemap, the home page's links and theirs (bounded). */
  async function examples(domain: string, given: readonly string[]): Promise<Discovery> {
    // The same URL sent twice stands for one kind.
    const urls = [...new Set(given)];
    const origin = new URL(urls[0]!).origin;
    const forms = new LinkForms(scopeOf(urls[0]!));
    // The examples are met first: their siblings' twins are them.
    forms.pages(urls, origin);
    const seen: Seen = { structures: [], fetched: {}, unusable: new Set() };
    const known = new Set(forms.pages(await sitemapUrls(origin), origin));
    const start = await pages.open(`${origin}/`, true);
    if (start.ok) {
      seen.structures.push(start.structure);
      const linked = start.links ? forms.pages(start.links.hrefs, start.links.base) : [];
      for (const link of linked) known.add(link);
      // Pages one link from home (area lists, categories) link to the examples' siblings; flat URL
      // shapes hold several kinds, so pages of the examples' own shape are read too.
      const exampleUrls = new Set(urls);
      const others = shapeBalanced(linked.filter((link) => !exampleUrls.has(link)), EXAMPLE_HUBS, preparationSeed(seed, domain, 'examples'));
      for (const link of await visit(others, seen, forms, true)) known.add(link);
    }
    const opened: Array<Extract<Opened, { ok: true }>> = [];
    let notHtml = 0;
    for (const url of urls) {
      const page = await pages.open(url, true);
      if (!page.ok) {
        if (page.notHtml) notHtml++;
        continue;
      }
      opened.push(page);
      seen.fetched[url] = page.page.id;
      if (page.links) for (const link of forms.pages(page.links.hrefs, page.links.base)) known.add(link);
    }
    if (opened.length === 0 && notHtml === urls.length) {
      return { ok: false, code: 'unsupported', detail: 'The example URLs answer with documents that are not HTML (Extract reads web pages).' };
    }
    if (opened.length === 0) return { ok: false, code: 'unpreparable', detail: 'None of the example URLs answered with usable HTML.' };
    // The site's chrome: what the home page and the examples all have.
    const chrome = chromeOf([...seen.structures, ...opened.map((page) => page.structure)]);
    const kinds: Kind[] = [];
    const taken = new Set<string>();
    for (const page of opened) {
      const kind = exampleKind({ ...page.structure, url: page.page.url }, [...known], chrome, taken);
      taken.add(kind.role);
      kinds.push(withFetched(kind, seen.fetched));
    }
    return { ok: true, kinds };
  }

  return { discover, examples };
}

/** The kind with the snapshots of its pages fetched so far. */
function withFetched(kind: Kind, fetched: Record<string, string>): Kind {
  const own = Object.fromEntries(kind.urls.flatMap((url) => (fetched[url] !== undefined ? [[url, fetched[url]!]] : [])));
  return Object.keys(own).length > 0 ? { ...kind, fetched: own } : kind;
}
