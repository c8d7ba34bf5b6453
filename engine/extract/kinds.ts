/**
 * Page kinds from URL patterns and DOM structure together. URLs are first grouped by the shape of their
 * path (paging keys aside); the pages of each group that were fetched are then compared by structure
 * (their tag-path shingles, less the site's chrome, or as a whole) and by type: a list page's repeated
 * records outweigh its own prose (records.ts), a detail page's do not, so a rail of related records
 * does not make a detail page a list. A group whose pages fall into two templates becomes two kinds,
 * each remembering its structure so sampling keeps only its own pages (`/p/<id>` for products and
 * articles alike; flat slugs for both listings and area pages); variants of one template (optional
 * blocks, rails, A/B wrappers) stay one kind, typed by most of its pages, and so do two layouts of
 * detail pages that show the same labels. Groups of one template under two URL shapes become one kind.
 * Everything is sorted: the same pages give the same kinds.
 */
import { parseHtml } from '../outputs/dom';
import { shapeOf } from './discover';
import { listRegion } from './records';
import { ANY_TOKEN, fieldName, pageLabels, pageShingles } from './signals';

/** A kind of page of a site, as discovery finds it and preparation samples it. */
export interface Kind {
  role: string;
  /** A page of one record (a listing, a product) or of many (search results, a category). */
  type: 'detail' | 'list';
  /** The first is the kind's representative page (an example URL, or a page seen to be of the kind). */
  urls: string[];
  /**
   * When the kind's URLs also hold pages of another template: the tag-path shingles its own pages
   * share (the site's chrome left out), which each sampled page must mostly contain.
   */
  structure?: {
    shingles: string[];
    chrome: string[];
    /** The kind comes in layouts that share little structure but show the same labels: its pages show most of these. */
    labels?: string[];
  };
  /** Pages discovery already fetched, by URL: their snapshot ids (sampling does not fetch them again). */
  fetched?: Record<string, string>;
}

const MIN_KIND_URLS = 3;
/** A shingle on this share of all pages fetched is the site's chrome (header, footer, layout). */
const CHROME_SHARE = 0.9;
/** Share of a kind's own shingles a page of it contains. */
const SAME_TEMPLATE = 0.5;
/** Two groups whose signatures overlap this much are one template under two URL shapes. */
const SAME_KIND = 0.8;
/** A shingle belongs to a kind's signature when this share of its pages has it. */
const SIGNATURE_SHARE = 0.8;
const MAX_KINDS = 6;

export interface PageStructure {
  url: string;
  /** Tag-path shingles (depth 3), sorted. */
  shingles: string[];
  /** The page is a list (search results, a category): its repeated records outweigh its own prose. */
  list: boolean;
  /** Names of the labels the page shows (`price`, `bedrooms`), sorted. */
  labels?: string[];
}

export function pageStructure(html: string, url: string): PageStructure {
  const root = parseHtml(html);
  const body = root.querySelector('body') ?? root;
  return { url, shingles: [...pageShingles(root)].sort(), list: listRegion(body, ANY_TOKEN) !== undefined, labels: pageLabels(root) };
}

const typeOf = (page: Pick<PageStructure, 'list'>): Kind['type'] => (page.list ? 'list' : 'detail');

/** Share of `signature` that `shingles` contains (1 for an empty signature: nothing tells them apart). */
function containment(signature: ReadonlySet<string>, shingles: ReadonlySet<string>): number {
  if (signature.size === 0) return 1;
  let hits = 0;
  for (const shingle of signature) if (shingles.has(shingle)) hits++;
  return hits / signature.size;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let both = 0;
  for (const item of a) if (b.has(item)) both++;
  return both / (a.size + b.size - both);
}

/** Shingles nearly every fetched page has (none when too few pages were fetched to tell). */
export function chromeOf(pages: readonly PageStructure[]): string[] {
  if (pages.length < 3) return [];
  const counts = new Map<string, number>();
  for (const page of pages) for (const shingle of page.shingles) counts.set(shingle, (counts.get(shingle) ?? 0) + 1);
  return [...counts].filter(([, count]) => count >= pages.length * CHROME_SHARE).map(([shingle]) => shingle).sort();
}

const without = (shingles: readonly string[], chrome: ReadonlySet<string>): Set<string> => new Set(shingles.filter((shingle) => !chrome.has(shingle)));

function common(pages: readonly PageStructure[], chrome: ReadonlySet<string>): Set<string> {
  const counts = new Map<string, number>();
  for (const page of pages) for (const shingle of page.shingles) if (!chrome.has(shingle)) counts.set(shingle, (counts.get(shingle) ?? 0) + 1);
  return new Set([...counts].filter(([, count]) => count >= pages.length * SIGNATURE_SHARE).map(([shingle]) => shingle));
}

/** Layouts of one kind share this many of the labels most of their pages show, at least. */
const MIN_SHARED_LABELS = 3;
/** ... and this share of the labels of the layout that shows fewer. */
const SHARED_LABELS = 0.6;
/** A page of a kind of several layouts shows this share of the kind's labels. */
const LABELS_HELD = 0.6;

/** Labels most of `pages` show. */
function labelsOf(pages: readonly PageStructure[]): Set<string> {
  const counts = new Map<string, number>();
  for (const page of pages) for (const label of page.labels ?? []) counts.set(label, (counts.get(label) ?? 0) + 1);
  return new Set([...counts].filter(([, count]) => count * 2 >= pages.length).map(([label]) => label));
}

function sharedLabels(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  let both = 0;
  for (const label of a) if (b.has(label)) both++;
  return both >= MIN_SHARED_LABELS && both >= SHARED_LABELS * Math.min(a.size, b.size);
}

/** A page typed otherwise than its kind still belongs to it when it holds this much of the kind's structure. */
const VARIANT_TEMPLATE = 0.8;

/**
 * Whether a fetched page is of the kind: its type, and when the kind has one, its structure. A page of
 * the kind's structure typed otherwise (a detail page whose rail of records outweighs its prose) is a
 * variant of the kind when it holds nearly all of that structure.
 */
export function belongs(kind: Pick<Kind, 'type' | 'structure'>, page: PageStructure): boolean {
  if (!kind.structure) return typeOf(page) === kind.type;
  const chrome = new Set(kind.structure.chrome);
  const held = containment(new Set(kind.structure.shingles), without(page.shingles, chrome));
  if (held >= (typeOf(page) === kind.type ? SAME_TEMPLATE : VARIANT_TEMPLATE)) return true;
  // A kind of several layouts: a page of any of them shows the kind's labels.
  const labels = kind.structure.labels ?? [];
  return typeOf(page) === kind.type && labels.length > 0 && containment(new Set(labels), new Set(page.labels ?? [])) >= LABELS_HELD;
}

/**
 * Two pages are of one template when what is left of them besides the site's chrome is alike, or when
 * they are alike as a whole: variants of one template (an optional block, a rail of records, an A/B
 * wrapper) differ by a few tag paths, which is all that remains of a page once a kind that makes up
 * most of the site has its own template counted as chrome. Pages typed differently (a list, a detail)
 * need more likeness to be one template.
 */
const WHOLE_TEMPLATE: Record<'same' | 'other', number> = { same: 0.6, other: 0.7 };

function sameTemplate(a: PageStructure & { bare: Set<string>; all: Set<string> }, b: PageStructure & { bare: Set<string>; all: Set<string> }): boolean {
  if (typeOf(a) === typeOf(b) && jaccard(a.bare, b.bare) >= SAME_TEMPLATE) return true;
  return jaccard(a.all, b.all) >= WHOLE_TEMPLATE[typeOf(a) === typeOf(b) ? 'same' : 'other'];
}

/**
 * The templates among one URL group's pages: a page joins the first cluster with a page of its
 * template (single linkage, so variants chain into their template), and a cluster is a list when most
 * of its pages are (a rail of records on some detail pages does not make them another kind).
 */
function templatesOf(members: readonly PageStructure[], chrome: ReadonlySet<string>): Array<{ type: Kind['type']; members: PageStructure[] }> {
  const clusters: Array<Array<PageStructure & { bare: Set<string>; all: Set<string> }>> = [];
  for (const page of members) {
    const entry = { ...page, bare: without(page.shingles, chrome), all: new Set(page.shingles) };
    const cluster = clusters.find((candidate) => candidate.some((other) => sameTemplate(other, entry)));
    if (cluster) cluster.push(entry);
    else clusters.push([entry]);
  }
  return clusters.map((cluster) => {
    const lists = cluster.filter((page) => page.list).length;
    return { type: lists * 2 > cluster.length ? 'list' : 'detail', members: cluster.map(({ bare: _bare, all: _all, ...page }) => page) };
  });
}

/**
 * Layouts of one kind of detail page (a table of facts on some pages, a list of terms on others, as
 * a site moves from one to the other) share little structure, but their pages show the same labels:
 * such templates of one URL group are one kind, which remembers its labels.
 */
function layoutsOf(clusters: ReadonlyArray<{ type: Kind['type']; members: PageStructure[] }>): Array<{ type: Kind['type']; members: PageStructure[]; labels?: Set<string> }> {
  const out: Array<{ type: Kind['type']; members: PageStructure[]; labels?: Set<string> }> = [];
  for (const cluster of clusters) {
    const own = labelsOf(cluster.members);
    const twin = cluster.type === 'detail' ? out.find((other) => other.type === 'detail' && sharedLabels(labelsOf(other.members), own)) : undefined;
    if (!twin) {
      out.push({ ...cluster, members: [...cluster.members] });
      continue;
    }
    twin.members.push(...cluster.members);
    twin.labels = labelsOf(twin.members);
  }
  return out;
}

interface Draft {
  base: string;
  type: Kind['type'];
  urls: string[];
  members: PageStructure[];
  signature: Set<string>;
  /** The URLs also hold pages of another template: sampling must check each page's structure. */
  mixed: boolean;
  /** Labels of a kind of several layouts. */
  labels?: Set<string>;
}

/** The name of a group of URLs: its constant first segment, else `page`. */
function baseOf(urls: readonly string[]): string {
  const shapes = urls.map(shapeOf);
  const first = shapes[0]!.first;
  const constant = shapes.every((shape) => shape.first === first) && (shapes[0]!.depth > 1 || shapes[0]!.query);
  return (constant && fieldName(first)) || 'page';
}

/**
 * Kinds among `urls` (normalised, same domain), told apart with the structures of the pages fetched
 * so far. A group none of whose pages were fetched stays a kind by URL alone (sampling will say whether
 * its pages are usable); one whose pages were tried and all `unusable` is none.
 */
export function kindsOf(urls: readonly string[], pages: readonly PageStructure[], unusable: ReadonlySet<string> = new Set()): Kind[] {
  const chrome = new Set(chromeOf(pages));
  const byUrl = new Map(pages.map((page) => [page.url, page]));
  const groups = new Map<string, string[]>();
  for (const url of [...new Set(urls)].sort()) {
    const shape = shapeOf(url);
    if (shape.depth === 0 && !shape.query) continue;
    groups.set(shape.key, [...(groups.get(shape.key) ?? []), url]);
  }
  const drafts: Draft[] = [];
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key)!;
    if (group.length < MIN_KIND_URLS) continue;
    const base = baseOf(group);
    const members = group.flatMap((url) => byUrl.get(url) ?? []);
    if (members.length === 0) {
      // Every page of the group tried answered nothing usable (dead links, pages behind a login): no kind.
      if (group.filter((url) => unusable.has(url)).length >= Math.min(MIN_KIND_URLS, group.length)) continue;
      drafts.push({ base, type: 'detail', urls: group, members, signature: new Set(), mixed: false });
      continue;
    }
    const clusters = layoutsOf(templatesOf(members, chrome));
    // A lone page of another template among many is an odd page, not a kind.
    let kept = clusters.length === 1 ? clusters : clusters.filter((cluster) => cluster.members.length >= 2);
    if (kept.length === 0) kept = [clusters.reduce((a, b) => (b.members.length > a.members.length ? b : a))];
    for (const cluster of kept) {
      // Pages of another template under the same URLs, or variants typed otherwise: sampling checks each page's structure.
      const mixed = clusters.length > 1 || cluster.members.some((page) => typeOf(page) !== cluster.type);
      drafts.push({ base, type: cluster.type, urls: group, members: cluster.members, signature: common(cluster.members, chrome), mixed: mixed || cluster.labels !== undefined, ...(cluster.labels ? { labels: cluster.labels } : {}) });
    }
  }

  const merged: Draft[] = [];
  for (const draft of drafts) {
    const twin = merged.find((other) => other.type === draft.type && other.members.length > 0 && draft.members.length > 0 && other.urls !== draft.urls && jaccard(other.signature, draft.signature) >= SAME_KIND);
    if (!twin) {
      merged.push({ ...draft });
      continue;
    }
    twin.urls = [...new Set([...twin.urls, ...draft.urls])].sort();
    twin.members = [...twin.members, ...draft.members];
    twin.mixed ||= draft.mixed;
    if (draft.labels) twin.labels = new Set([...(twin.labels ?? []), ...draft.labels]);
  }

  const kinds: Kind[] = [];
  const taken = new Set<string>();
  for (const draft of merged.sort((a, b) => b.urls.length - a.urls.length || a.base.localeCompare(b.base) || a.type.localeCompare(b.type)).slice(0, MAX_KINDS)) {
    let role = `${draft.base}_${draft.type}`;
    for (let suffix = 2; taken.has(role); suffix++) role = `${draft.base}_${draft.type}_${suffix}`;
    taken.add(role);
    // A page seen to be of the kind comes first: it stands for the kind in the record's roles.
    const representative = [...draft.members].sort((a, b) => a.url.localeCompare(b.url))[0]?.url;
    kinds.push({
      role,
      type: draft.type,
      urls: representative ? [representative, ...draft.urls.filter((url) => url !== representative)] : draft.urls,
      ...(draft.mixed ? { structure: { shingles: [...draft.signature].sort(), chrome: [...chrome].sort(), ...(draft.labels ? { labels: [...draft.labels].sort() } : {}) } } : {}),
    });
  }
  return kinds;
}

/**
 * The kind an example URL stands for: its siblings (same URL shape), its type and structure from the
 * example page itself, so sampling keeps siblings of the same template only.
 */
export function exampleKind(example: PageStructure, siblings: readonly string[], chrome: readonly string[], taken: ReadonlySet<string>): Kind {
  const type = typeOf(example);
  const shape = shapeOf(example.url);
  const sameShape = siblings.filter((url) => url !== example.url && shapeOf(url).key === shape.key);
  const base = baseOf([example.url, ...sameShape]);
  let role = `${base}_${type}`;
  for (let suffix = 2; taken.has(role); suffix++) role = `${base}_${type}_${suffix}`;
  const chromeSet = new Set(chrome);
  return { role, type, urls: [example.url, ...[...new Set(sameShape)].sort()], structure: { shingles: [...without(example.shingles, chromeSet)].sort(), chrome: [...chrome] } };
}
