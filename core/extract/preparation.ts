/** What the preparation workflow and its activities pass each other: ids and small records, never pages. */
import type { RoleRecipe } from './recipe';
import type { FailureCode } from './store';

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

export type Discovery = { ok: true; kinds: Kind[] } | { ok: false; code: Extract<FailureCode, 'discovery_failed' | 'unpreparable' | 'unsupported'>; detail: string };

export interface Sample {
  role: string;
  type: Kind['type'];
  /** The kind's representative page (an example URL, else a page discovery saw of it). */
  url: string;
  induce: string[];
  verify: string[];
  /** Pages that could not be used (blocked, not HTML, empty). */
  unusable: number;
  /** Pages skipped as another kind's (another template under the same URLs). */
  other: number;
  /** Most usable pages came back only from a browser. */
  rendered: boolean;
  /**
   * Pages of the kind the sample did not try (a few): read when a labelled field has one value on every
   * induction page, to see whether it varies after all.
   */
  spare?: Kind;
}

export type Draft =
  | { ok: true; role: Omit<RoleRecipe, 'minSimilarity'> }
  | { ok: false; reason: 'unusable' | 'too_few_pages' | 'nothing_varies'; detail: string };

export type RoleOutcome =
  | { ok: true; recipe: RoleRecipe; detail: string }
  | { ok: false; role: string; url: string; reason: 'unusable' | 'too_few_pages' | 'nothing_varies' | 'not_verified'; detail: string };

export interface FinishInput {
  domain: string;
  /** A re-preparation of a ready domain: a failure keeps the recipe in force. */
  refresh?: boolean;
  outcomes: RoleOutcome[];
  failure?: { code: FailureCode; detail: string };
}

