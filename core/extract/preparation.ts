/** What the preparation workflow and its activities pass each other: ids and small records, never pages. */
import type { Kind, RoleRecipe } from '../../engine';

export type { Kind };

/** Where a preparation stands (the record's `state`, and the workflow's search attribute). */
export type PreparationState = 'received' | 'discovering' | 'preparing' | 'verifying' | 'ready' | 'failed';

export type FailureCode =
  | 'interrupted'
  | 'preparation_exhausted'
  | 'discovery_failed'
  | 'unpreparable'
  | 'preparation_failed'
  | 'verification_failed'
  | 'unsupported';

/** A page kind's outcome, as the record lists it. */
export interface RoleStatus {
  role: string;
  status: 'preparing' | 'ready' | 'failed';
  url: string;
  detail?: string;
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

