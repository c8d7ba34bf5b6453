/**
 * Induction: from a sample of pages of one kind, the fields that vary from page to page, found
 * independently by two families of evidence and joined where they agree:
 * - label pairs, keyed by label, shape and anchor path (label-candidates.ts: one anchor per variant of
 *   the kind's pages, one field per label), counted only on pages where they give one value (a
 *   "similar listings" block repeats its labels with other values, so it never qualifies; a block
 *   shown twice with the same values does);
 * - structured data (JSON-LD, embedded state), keyed by scope and path.
 * Label-less text that is the same on every page is template, not data, and is dropped; a value a stable
 * label owns is data however few values the sample shows (a "Transmission" that is mostly "Automatic",
 * a "Furnished" that is "Yes" or "No"), unless it sits in the site's chrome (header, footer, navigation).
 * A field with one value on every sampled page is marked `constant`, so the caller may sample more
 * pages before it believes it (and says so in the record). A structured value that agrees
 * with a label pair on the pages where both appear becomes that field's second source; otherwise it is a
 * field of its own, named after its key. Names come from the site: its labels first, then its keys.
 * The kind's signature (what recognises its pages) is the tag paths most sampled pages share besides
 * their rails of records, which come and go from page to page.
 */
import { parseHtml } from '../outputs/dom';
import { templateShingles } from './records';
import { CHROME_STEP, labelCandidates, type Candidate } from './label-candidates';
import { fieldName, pageClassTokens, pageSignals, type PageSignals } from './signals';
import type { FieldRecipe, RoleRecipe } from './recipe';
import { decimalMarkOf, inferType, normalize, type DecimalMark } from './values';

export interface SamplePage {
  url: string;
  html: string;
}

export type Induction =
  | { ok: true; role: Omit<RoleRecipe, 'minSimilarity'>; candidates: number; constant?: string[] }
  | { ok: false; reason: 'too_few_pages' | 'nothing_varies'; detail: string };

const STABLE_TOKEN_SHARE = 0.6;
const FIELD_SUPPORT = 0.5;
const REQUIRED_SUPPORT = 0.9;
const AGREEMENT = 0.8;
const SIGNATURE_SHARE = 0.8;
/** Structured keys that identify or configure rather than describe. */
const NOISE_KEY = /(^|\.)(@id|id|_id|uuid|key|token|hash|sku|gtin\d*|build\w*|version|locale|lang|page|query|timestamp|csrf|nonce|context|runtimeConfig)$/i;

export function stableTokens(pages: readonly SamplePage[]): Set<string> {
  const counts = new Map<string, number>();
  for (const page of pages) for (const token of pageClassTokens(page.html)) counts.set(token, (counts.get(token) ?? 0) + 1);
  return new Set([...counts].filter(([, count]) => count >= pages.length * STABLE_TOKEN_SHARE).map(([token]) => token));
}

function collect(signals: readonly PageSignals[]): Candidate[] {
  const candidates = new Map<string, Candidate>();
  const add = (key: string, make: () => Omit<Candidate, 'values'>, page: number, value: string) => {
    let candidate = candidates.get(key);
    if (!candidate) candidates.set(key, (candidate = { ...make(), values: new Map() }));
    candidate.values.set(page, value);
  };
  signals.forEach((page, index) => {
    if (page.title) {
      // By its tag alone: the heading's classes and itemprop are what variants of a template change.
      const anchor = (page.title.path[page.title.path.length - 1] ?? '').split(/[.#[]/, 1)[0] ?? '';
      add(`title|${anchor}`, () => ({ key: `title|${anchor}`, name: 'title', sources: [{ kind: 'title', anchor }] }), index, page.title.value);
    }
    const seen = new Set<string>();
    for (const value of page.structured) {
      const key = `${value.source}|${value.scope}|${value.path}`;
      // The page's own address is where it was fetched, not data of the page.
      if (seen.has(key) || NOISE_KEY.test(value.path) || value.value.length > 500 || value.value === page.url) continue;
      seen.add(key);
      add(key, () => ({ key, name: value.path, sources: [{ kind: value.source, scope: value.scope, path: value.path }] }), index, value.value);
    }
  });
  return [...labelCandidates(signals, FIELD_SUPPORT), ...candidates.values()];
}

/**
 * Shapes where a label owns its value: a term and its definition, a row, a label element and its value,
 * `Label: value`. An element's `title` (a link's tooltip, "Add to cart") and a leading word ("by") are
 * weaker: such values count as data only when they vary.
 */
const OWNING_SHAPES: ReadonlySet<string> = new Set(['dl', 'table', 'pair', 'colon', 'inline']);

/** A value its own label owns, outside the chrome: data, whatever the sample's spread of values. */
const labelled = (candidate: Candidate): boolean => {
  const [source] = candidate.sources;
  return source?.kind === 'label' && OWNING_SHAPES.has(source.shape) && !(candidate.path ?? []).some((step) => CHROME_STEP.test(step));
};

/**
 * Data varies across pages; label-less template does not. Small counts (bedrooms) vary little but still
 * vary; labelled values are data however few distinct values the sample has (see `labelled`).
 */
const varies = (candidate: Candidate): boolean => {
  const values = [...candidate.values.values()];
  const distinct = new Set(values).size;
  if (labelled(candidate)) return distinct >= 1;
  // `Sold by <a>…</a>` outside the chrome: a few dealers over many pages still vary.
  const [source] = candidate.sources;
  if (source?.kind === 'label' && source.shape === 'lead' && !(candidate.path ?? []).some((step) => CHROME_STEP.test(step))) return distinct >= 2;
  return distinct >= 2 && (distinct / values.length >= 0.3 || values.every((value) => /^\d{1,3}$/.test(value.trim())));
};

const minorHeading = (candidate: Candidate): boolean => {
  const [source] = candidate.sources;
  return source?.kind === 'title' && /(^|>)h2[^>]*$/.test(source.anchor);
};

const isConstant = (candidate: Candidate): boolean => new Set(candidate.values.values()).size === 1;

/** `address.addressLocality` → `address.address_locality`; embedded paths lose the prefix they all share. */
function structuredName(path: string, commonPrefix: string): string {
  const rest = commonPrefix && path.startsWith(`${commonPrefix}.`) ? path.slice(commonPrefix.length + 1) : path;
  return rest
    .split('.')
    .map((part) => fieldName(part.replace(/([a-z0-9])([A-Z])/g, '$1_$2')))
    .filter(Boolean)
    .join('.');
}

function commonPathPrefix(paths: readonly string[]): string {
  if (paths.length < 2) return '';
  const split = paths.map((path) => path.split('.'));
  const prefix: string[] = [];
  for (let index = 0; ; index++) {
    const part = split[0]![index];
    if (part === undefined || split.some((parts) => parts[index] !== part || parts.length <= index + 1)) break;
    prefix.push(part);
  }
  return prefix.join('.');
}

/** Values of two candidates agree on most pages where both have one, after normalisation. */
function agree(a: Candidate, b: Candidate, mark: DecimalMark, urls: readonly string[]): boolean {
  const type = inferType([...a.values.values()], mark);
  let both = 0;
  let same = 0;
  for (const [page, value] of a.values) {
    const other = b.values.get(page);
    if (other === undefined) continue;
    both++;
    const base = urls[page] ?? 'http://invalid/';
    if (normalize(value, type, mark, base) === normalize(other, type, mark, base)) same++;
  }
  return both >= 2 && same / both >= AGREEMENT;
}

export function urlPatterns(urls: readonly string[]): string[] {
  const bySegments = new Map<number, string[][]>();
  for (const url of urls) {
    const segments = new URL(url).pathname.split('/').slice(1);
    const group = bySegments.get(segments.length) ?? [];
    group.push(segments);
    bySegments.set(segments.length, group);
  }
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...bySegments.values()].map((group) => {
    const parts = group[0]!.map((segment, index) => (group.every((other) => other[index] === segment) && group.length > 1 ? escape(segment) : index === group[0]!.length - 1 && segment === '' ? '' : '[^/]+'));
    return `^/${parts.join('/')}$`;
  });
}

export function induceRole(roleName: string, pages: readonly SamplePage[], render: RoleRecipe['render'] = 'http', chrome: ReadonlySet<string> = new Set()): Induction {
  if (pages.length < 2) return { ok: false, reason: 'too_few_pages', detail: `${pages.length} page(s) of this kind: at least 2 are needed to tell data from template.` };
  const stable = stableTokens(pages);
  const signals = pages.map((page) => pageSignals(page.html, page.url, stable));
  const urls = pages.map((page) => page.url);
  const mark = decimalMarkOf(signals.flatMap((page) => page.labels.map((pair) => pair.value)));
  const candidates = collect(signals).filter((candidate) => candidate.values.size >= pages.length * FIELD_SUPPORT && varies(candidate));
  // Pages on which nothing at all varies are one page under many URLs: their labelled values are its template.
  if (candidates.length === 0 || candidates.every(isConstant)) return { ok: false, reason: 'nothing_varies', detail: `Nothing varies across the ${pages.length} sampled pages of this kind.` };

  // DOM fields first: one per name, the best supported anchor.
  const dom = candidates
    .filter((candidate) => candidate.sources[0]?.kind === 'label' || candidate.sources[0]?.kind === 'title')
    .sort((a, b) => b.values.size - a.values.size || a.key.length - b.key.length || a.key.localeCompare(b.key));
  const fields = new Map<string, { candidate: Candidate; extra: Candidate[] }>();
  for (const candidate of dom) if (!fields.has(candidate.name)) fields.set(candidate.name, { candidate, extra: [] });

  const structured = candidates.filter((candidate) => candidate.sources[0]?.kind === 'jsonld' || candidate.sources[0]?.kind === 'embedded').sort((a, b) => a.key.localeCompare(b.key));
  const embeddedPrefix = commonPathPrefix(structured.filter((candidate) => candidate.sources[0]?.kind === 'embedded').map((candidate) => candidate.name));
  for (const candidate of structured) {
    const match = [...fields.values()].find((field) => agree(field.candidate, candidate, mark, urls));
    const name = structuredName(candidate.name, candidate.sources[0]?.kind === 'embedded' ? embeddedPrefix : '');
    if (match) {
      match.extra.push(candidate);
      // A page without an h1 names its heading by nothing of its own: the site's key for the same value does.
      if (minorHeading(match.candidate) && name && !fields.has(name)) {
        fields.delete(match.candidate.name);
        fields.set(name, { candidate: { ...match.candidate, name }, extra: match.extra });
      }
      continue;
    }
    if (name && !fields.has(name)) fields.set(name, { candidate: { ...candidate, name }, extra: [] });
  }

  const recipeFields: FieldRecipe[] = [...fields.values()]
    .map(({ candidate, extra }) => ({
      name: candidate.name,
      ...(candidate.label ? { label: candidate.label } : {}),
      type: inferType([...candidate.values.values()], mark),
      required: candidate.values.size >= pages.length * REQUIRED_SUPPORT,
      sources: [...candidate.sources, ...extra.flatMap((other) => other.sources)],
      ...(isConstant(candidate) ? { constant: { pages: candidate.values.size, extra: 0 } } : {}),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));

  // What the kind's pages share besides their rails of records, which some pages of a kind lack.
  const shingleCounts = new Map<string, number>();
  for (const page of pages) for (const shingle of templateShingles(parseHtml(page.html))) shingleCounts.set(shingle, (shingleCounts.get(shingle) ?? 0) + 1);
  const signature = [...shingleCounts]
    .filter(([shingle, count]) => count >= pages.length * SIGNATURE_SHARE && !chrome.has(shingle))
    .map(([shingle]) => shingle)
    .sort();

  return {
    ok: true,
    candidates: candidates.length,
    constant: recipeFields.filter((field) => field.constant).map((field) => field.name),
    role: {
      role: roleName,
      url: pages[0]!.url,
      urlPatterns: urlPatterns(urls),
      signature,
      stableTokens: [...stable].sort(),
      decimalMark: mark,
      render,
      fields: recipeFields,
    },
  };
}
