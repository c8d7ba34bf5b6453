/**
 * Recipes are data, never code: per page kind (role), how to recognise a page of it and where each field
 * is, in the order its sources are tried. `applyRole` interprets one role on one page; the same function
 * runs during verification and on every request, so what was verified is what runs.
 */
import type { DomainRecipe, ListRecipe, RoleRecipe, Source } from './recipe-data';
import { parseHtml, type HTMLElement } from '../outputs/dom';
import { nextPageHref, recordKey, recordsAt, recordValues, type RecordValue } from './records';
import { endsWithAnchor, pageShingles, pageSignals, type PageSignals, type SignalNeeds } from './signals';
import { normalize } from './values';

export type { DomainRecipe, FieldRecipe, RoleRecipe, Source } from './recipe-data';

export type Parsed = Record<string, unknown>;

function sourceValue(source: Source, signals: PageSignals): string | undefined {
  switch (source.kind) {
    case 'label': {
      const hits = signals.labels.filter((pair) => pair.label === source.label && pair.shape === source.shape && endsWithAnchor(source.parent ? pair.path.slice(0, -1) : pair.path, source.anchor));
      // The same block shown twice (a tab and its print copy) agrees with itself; different values are ambiguous.
      return hits.length > 0 && hits.every((hit) => hit.value === hits[0]!.value) ? hits[0]!.value : undefined;
    }
    case 'title': {
      if (!signals.title) return undefined;
      // A bare tag names the heading whatever its classes (how recipes name it since extract-3).
      const last = signals.title.path[signals.title.path.length - 1] ?? '';
      const matches = /^[a-z0-9]+$/.test(source.anchor) ? last.split(/[.#[]/, 1)[0] === source.anchor : endsWithAnchor(signals.title.path, source.anchor);
      return matches ? signals.title.value : undefined;
    }
    case 'jsonld':
    case 'embedded': {
      const hit = signals.structured.find((value) => value.source === source.kind && value.scope === source.scope && value.path === source.path);
      return hit?.value;
    }
    case 'record':
      // Only inside a record (applyList).
      return undefined;
  }
}

/** What a detail role's sources read, so a request reads nothing else of the page. */
const needs = new WeakMap<RoleRecipe, SignalNeeds>();
function needsOf(role: RoleRecipe): SignalNeeds {
  let found = needs.get(role);
  if (!found) {
    const sources = role.fields.flatMap((field) => field.sources);
    found = {
      labels: new Set(sources.flatMap((source) => (source.kind === 'label' ? [source.label] : []))),
      structured: sources.some((source) => source.kind === 'jsonld' || source.kind === 'embedded'),
    };
    needs.set(role, found);
  }
  return found;
}

/** Sets `a.b.c` in a nested object. */
function setPath(target: Parsed, name: string, value: unknown): void {
  const keys = name.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Parsed;
  }
  node[keys[keys.length - 1]!] = value;
}

export interface Applied {
  parsed: Parsed;
  /** Flat native name → value, as verification compares them (a detail kind). */
  values: Map<string, string | number>;
  /** A list kind: each record's flat native name → value. */
  items?: Array<Map<string, string | number>>;
  /** Required fields the page did not give. */
  missing: string[];
  /** For each field, what each of its sources gave, in the sources' order (agreement checks). */
  bySource: Map<string, Array<string | number | undefined>>;
}

export function applyRole(role: RoleRecipe, html: string | HTMLElement, url: string, signals?: PageSignals): Applied {
  if (role.type === 'list' && role.list) return applyList(role, role.list, typeof html === 'string' ? parseHtml(html) : html, url);
  const page = signals ?? pageSignals(html, url, new Set(role.stableTokens), needsOf(role));
  const parsed: Parsed = {};
  const values = new Map<string, string | number>();
  const bySource = new Map<string, Array<string | number | undefined>>();
  const missing: string[] = [];
  for (const field of role.fields) {
    const found: Array<string | number | undefined> = [];
    for (const source of field.sources) {
      const raw = sourceValue(source, page);
      found.push(raw === undefined ? undefined : normalize(raw, field.type, role.decimalMark, url));
    }
    bySource.set(field.name, found);
    const first = found.find((value) => value !== undefined);
    if (first === undefined) {
      if (field.required) missing.push(field.name);
      continue;
    }
    values.set(field.name, first);
    setPath(parsed, field.name, first);
  }
  return { parsed, values, missing, bySource };
}

/**
 * A list kind: every record under the learned container, each read like a small detail page, in
 * document order; `next_page` when this page links its next one (`rel=next`).
 */
function applyList(role: RoleRecipe, list: ListRecipe, root: HTMLElement, url: string): Applied {
  const stable = new Set(role.stableTokens);
  const body = root.querySelector('body') ?? root;
  const items: Array<Map<string, string | number>> = [];
  const bySource = new Map<string, Array<string | number | undefined>>();
  const parsedItems: Parsed[] = [];
  for (const record of recordsAt(body, list.container, list.record, stable)) {
    const values: Map<string, RecordValue> = recordValues(record, stable);
    const item = new Map<string, string | number>();
    const parsed: Parsed = {};
    for (const field of role.fields) {
      for (const source of field.sources) {
        if (source.kind !== 'record') continue;
        const raw = values.get(recordKey(source))?.value;
        const value = raw === undefined ? undefined : normalize(raw, field.type, role.decimalMark, url);
        if (value === undefined) continue;
        item.set(field.name, value);
        setPath(parsed, field.name, value);
        bySource.set(field.name, [...(bySource.get(field.name) ?? []), value]);
        break;
      }
    }
    items.push(item);
    parsedItems.push(parsed);
  }
  const parsed: Parsed = { items: parsedItems };
  // A page linking its next page answers it, even when the pages sampled for the kind were all last pages.
  const next = nextPageHref(root);
  const nextUrl = next === undefined ? undefined : normalize(next, 'url', role.decimalMark, url);
  if (nextUrl !== undefined) parsed.next_page = nextUrl;
  // No record at all, or a required field no record gives: the recipe may no longer match.
  const missing = items.length === 0 ? ['items'] : role.fields.filter((field) => field.required && !items.some((item) => item.has(field.name))).map((field) => `items.${field.name}`);
  return { parsed, values: new Map(), items, missing, bySource };
}

/** Share of a role's signature the page contains. */
export function similarity(role: Pick<RoleRecipe, 'signature'>, shingles: ReadonlySet<string>): number {
  if (role.signature.length === 0) return 0;
  let hits = 0;
  for (const shingle of role.signature) if (shingles.has(shingle)) hits++;
  return hits / role.signature.length;
}

export const urlMatches = (role: Pick<RoleRecipe, 'urlPatterns'>, url: string): boolean => {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return false;
  }
  // `/a/1/` and `/a/1` are one page (the twin the site did not link may even be a 404): either form matches.
  const twin = path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`;
  return role.urlPatterns.some((pattern) => new RegExp(pattern).test(path) || new RegExp(pattern).test(twin));
};

/**
 * The role a page belongs to: among the roles whose URL patterns match, else among all, the one whose
 * signature the page contains most, provided it reaches the role's threshold.
 */
export function classify(recipe: Pick<DomainRecipe, 'roles'>, url: string, signals: Pick<PageSignals, 'shingles'>): RoleRecipe | undefined {
  const byUrl = recipe.roles.filter((role) => urlMatches(role, url));
  const candidates = byUrl.length > 0 ? byUrl : recipe.roles;
  let best: RoleRecipe | undefined;
  let bestScore = -1;
  for (const role of candidates) {
    const score = similarity(role, signals.shingles);
    if (score >= role.minSimilarity && score > bestScore) {
      best = role;
      bestScore = score;
    }
  }
  return best;
}

/** A page must hold this share of a role's signature before its fields are read as evidence of the role. */
const EVIDENCE_FLOOR = 0.5;
/** Share of a detail role's required fields (its heading aside) a page must give to be recognised by them. */
const EVIDENCE_SHARE = 0.8;
const EVIDENCE_FIELDS = 2;

/** Whether what a role read of a page shows the page is of the role: most of its required fields, or records. */
function evidenced(role: RoleRecipe, applied: Applied): boolean {
  if (role.type === 'list') return (applied.items?.length ?? 0) >= 2 && applied.missing.length === 0;
  const required = role.fields.filter((field) => field.required && field.sources[0]?.kind !== 'title');
  const given = required.filter((field) => applied.values.has(field.name)).length;
  return given >= EVIDENCE_FIELDS && given >= required.length * EVIDENCE_SHARE;
}

/**
 * The role of a page and what it gives. First by the page's URL and signature (`classify`); a page of
 * a role's URLs whose structure falls short of the role's threshold (a variant without a rail or an
 * optional block its sample always had) is still the role's when it gives the role's own fields.
 */
export function recognise(recipe: Pick<DomainRecipe, 'roles'>, url: string, page: string | HTMLElement): { role: RoleRecipe; applied: Applied; by: 'structure' | 'fields' } | undefined {
  const root = typeof page === 'string' ? parseHtml(page) : page;
  const shingles = pageShingles(root);
  const role = classify(recipe, url, { shingles });
  if (role) return { role, applied: applyRole(role, root, url), by: 'structure' };
  const candidates = recipe.roles
    .filter((candidate) => urlMatches(candidate, url))
    .map((candidate) => ({ candidate, score: similarity(candidate, shingles) }))
    .filter(({ score }) => score >= EVIDENCE_FLOOR)
    .sort((a, b) => b.score - a.score);
  for (const { candidate } of candidates) {
    const applied = applyRole(candidate, root, url);
    if (evidenced(candidate, applied)) return { role: candidate, applied, by: 'fields' };
  }
  return undefined;
}

/**
 * `extract_fields`: a dot-notated projection; unknown paths are reported, not guessed. Through a list
 * (`items.price`) the rest of the path applies to each of its entries.
 */
export function project(parsed: Parsed, fields: readonly string[]): { value: Parsed; unknown: string[] } {
  const value: Parsed = {};
  const unknown: string[] = [];
  for (const field of fields) {
    const found = pick(parsed, field.split('.'), value);
    if (!found) unknown.push(field);
  }
  return { value, unknown };
}

/** Copies `path` of `source` into `target`; false when the source has nothing there. */
function pick(source: Parsed, path: readonly string[], target: Parsed): boolean {
  const [key, ...rest] = path;
  if (key === undefined || !(key in source)) return false;
  const node = source[key];
  if (rest.length === 0) {
    target[key] = node;
    return true;
  }
  if (Array.isArray(node)) {
    const existing = Array.isArray(target[key]) ? (target[key] as Parsed[]) : node.map(() => ({}));
    let any = false;
    node.forEach((entry, index) => {
      if (typeof entry === 'object' && entry !== null && pick(entry as Parsed, rest, existing[index]!)) any = true;
    });
    target[key] = existing;
    return any || node.length === 0;
  }
  if (typeof node !== 'object' || node === null) return false;
  const child = typeof target[key] === 'object' && target[key] !== null ? (target[key] as Parsed) : {};
  const found = pick(node as Parsed, rest, child);
  if (found) target[key] = child;
  return found;
}
