/** What the preparation workflow and its activities pass each other: ids and small records, never pages. */
import type { RoleRecipe } from './recipe';
import type { FailureCode } from './store';

export interface Kind {
  role: string;
  urls: string[];
}

export type Discovery = { ok: true; kinds: Kind[] } | { ok: false; code: Extract<FailureCode, 'discovery_failed' | 'unpreparable' | 'unsupported'>; detail: string };

export interface Sample {
  role: string;
  induce: string[];
  verify: string[];
  /** Pages that could not be used (blocked, not HTML, empty). */
  unusable: number;
  /** Most usable pages came back only from a browser. */
  rendered: boolean;
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

