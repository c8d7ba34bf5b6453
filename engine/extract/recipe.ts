/**
 * Recipes are data, never code: per page kind (role), how to recognise a page of it and where each field
 * is, in the order its sources are tried. `applyRole` interprets one role on one page; the same function
 * runs during verification and on every request, so what was verified is what runs.
 */
import type { DomainRecipe, RoleRecipe, Source } from '../../core/extract/recipe';
import type { HTMLElement } from '../outputs/dom';
import { endsWithAnchor, pageSignals, type PageSignals } from './signals';
import { normalize } from './values';

export type { DomainRecipe, FieldRecipe, RoleRecipe, Source } from '../../core/extract/recipe';

export type Parsed = Record<string, unknown>;

function sourceValue(source: Source, signals: PageSignals): string | undefined {
  switch (source.kind) {
    case 'label': {
      const hits = signals.labels.filter((pair) => pair.label === source.label && pair.shape === source.shape && endsWithAnchor(pair.path, source.anchor));
      return hits.length === 1 ? hits[0]!.value : undefined;
    }
    case 'title':
      return signals.title && endsWithAnchor(signals.title.path, source.anchor) ? signals.title.value : undefined;
    case 'jsonld':
    case 'embedded': {
      const hit = signals.structured.find((value) => value.source === source.kind && value.scope === source.scope && value.path === source.path);
      return hit?.value;
    }
  }
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
  /** Flat native name → value, as verification compares them. */
  values: Map<string, string | number>;
  /** Required fields the page did not give. */
  missing: string[];
  /** For each field, the values of its sources that gave one (agreement checks). */
  bySource: Map<string, Array<string | number>>;
}

export function applyRole(role: RoleRecipe, html: string | HTMLElement, url: string, signals?: PageSignals): Applied {
  const page = signals ?? pageSignals(html, url, new Set(role.stableTokens));
  const parsed: Parsed = {};
  const values = new Map<string, string | number>();
  const bySource = new Map<string, Array<string | number>>();
  const missing: string[] = [];
  for (const field of role.fields) {
    const found: Array<string | number> = [];
    for (const source of field.sources) {
      const raw = sourceValue(source, page);
      const value = raw === undefined ? undefined : normalize(raw, field.type, role.decimalMark, url);
      if (value !== undefined) found.push(value);
    }
    bySource.set(field.name, found);
    const [first] = found;
    if (first === undefined) {
      if (field.required) missing.push(field.name);
      continue;
    }
    values.set(field.name, first);
    setPath(parsed, field.name, first);
  }
  return { parsed, values, missing, bySource };
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
  return role.urlPatterns.some((pattern) => new RegExp(pattern).test(path));
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

/** `extract_fields`: a dot-notated projection; unknown paths are reported, not guessed. */
export function project(parsed: Parsed, fields: readonly string[]): { value: Parsed; unknown: string[] } {
  const value: Parsed = {};
  const unknown: string[] = [];
  for (const field of fields) {
    let node: unknown = parsed;
    for (const key of field.split('.')) node = typeof node === 'object' && node !== null ? (node as Parsed)[key] : undefined;
    if (node === undefined) unknown.push(field);
    else setPath(value, field, node);
  }
  return { value, unknown };
}
