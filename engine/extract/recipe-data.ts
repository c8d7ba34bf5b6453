/**
 * The recipe as data: what preparation stores and every request interprets (engine/extract/recipe.ts).
 * Per page kind (role): how to recognise its pages and where each field is, in the order its sources
 * are tried. Immutable once verified; a re-preparation writes a new version.
 */
export type FieldType = 'int' | 'decimal' | 'price' | 'url' | 'text';
export type DecimalMark = '.' | ',';

export type Source =
  /**
   * A value beside the site's label. `anchor` is a suffix of the path of the value's element, or with
   * `parent` of the element holding label and value (the value's own element may move between pages).
   */
  | { kind: 'label'; label: string; shape: 'dl' | 'table' | 'pair' | 'colon' | 'titled' | 'inline' | 'lead'; anchor: string; parent?: boolean }
  | { kind: 'title'; anchor: string }
  | { kind: 'jsonld'; scope: string; path: string }
  | { kind: 'embedded'; scope: string; path: string }
  /** Inside one record of a list: where (steps from the record down) and how the value is read. */
  | { kind: 'record'; take: 'text' | 'own' | 'href' | 'src' | 'label'; path: string; label?: string };

/** How a list page's records are found: the element holding them, and the step each record matches. */
export interface ListRecipe {
  /** Anchor (suffix of the element's path) of the element whose children are the records. */
  container: string;
  /** Tag and stable classes every record has. */
  record: string;
  /** The kind's pages link their next page (`rel=next`): `next_page` is answered when a page has one. */
  nextPage: boolean;
}

export interface FieldRecipe {
  /** Native name, from the site's own label or structured key; dots make nested objects. */
  name: string;
  label?: string;
  type: FieldType;
  /** Seen on (nearly) every sampled page: a page without it means the recipe no longer matches. */
  required: boolean;
  sources: Source[];
  /**
   * The field had one value on every sampled page (`pages` of them, `extra` sampled for that reason):
   * kept because a stable label owns it, recorded so the decision can be explained.
   */
  constant?: { pages: number; extra: number };
}

export interface RoleRecipe {
  role: string;
  /** `list`: `fields` are those of each record, answered as `items`. Absent in older recipes: detail. */
  type?: 'detail' | 'list';
  list?: ListRecipe;
  /** The representative page the role was prepared from. */
  url: string;
  /** Path regular expressions of the role's URLs. */
  urlPatterns: string[];
  /** Tag-path shingles common to the role's pages, and the least share a page of the role contains. */
  signature: string[];
  minSimilarity: number;
  /** Class tokens stable across the role's pages (anchors are built from these only). */
  stableTokens: string[];
  decimalMark: DecimalMark;
  /** `browser` when the sampled pages needed rendering: plain fetches of them do not look the same. */
  render: 'http' | 'browser';
  /** A detail kind's fields, or the fields of each record of a list kind. */
  fields: FieldRecipe[];
  /** Labelled fields that had one value on every induction page, and how many more pages were read for them. */
  resampled?: { fields: string[]; pages: number };
  /** Canonical real-estate field → native field, when the role (or its records) are real-estate listings. */
  standard?: Record<string, string>;
}

export interface DomainRecipe {
  domain: string;
  version: number;
  /**
   * The induction that made the recipe (`extract-2` added list kinds; `extract-3` anchors label fields
   * on the element holding label and value, with one anchor per variant of a kind's pages). Recorded only: recipes of an
   * older one keep serving (a role without `type` is a detail kind) until a re-preparation.
   */
  algorithm: string;
  created_at: string;
  verticals: string[];
  roles: RoleRecipe[];
}

export const ALGORITHM_VERSION = 'extract-3';


/**
 * Whether a recipe maps a vertical's canonical schema. Read from its roles' mappings as well as its
 * `verticals` list: a recipe stored without the list (older ones, or a store that dropped the empty
 * array) is judged by what it can actually map, never by a missing field.
 */
export function servesVertical(recipe: Pick<DomainRecipe, 'verticals' | 'roles'>, vertical: 'real_estate'): boolean {
  const listed = Array.isArray(recipe.verticals) && recipe.verticals.includes(vertical);
  return listed || (Array.isArray(recipe.roles) && recipe.roles.some((role) => role.standard !== undefined && Object.keys(role.standard).length > 0));
}
