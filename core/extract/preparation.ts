/** What the preparation workflow and its activities pass each other: ids and small records, never pages. */
import type { Kind, RoleRecipe } from '../../engine';
import type { FailureCode } from './store';

export type { Kind };

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

