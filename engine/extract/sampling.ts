/**
 * How preparation draws its pages, as pure functions of a seed: how many pages of a kind it reads, the
 * order it tries them in, and how a sample is split between induction and verification. The seed is
 * the installation's sample seed (empty by default), the domain, the kind and the attempt: the same
 * seed always draws the same pages, and another seed draws others, so the spread of outcomes over
 * samples can be measured (bench/extract.ts --seeds) rather than hoped for.
 */
import { sampleOrder } from './discover';

/** Pages of a kind sampled for one attempt. */
export const SAMPLE_PAGES = 14;
/** URLs of a kind tried at most for one sample (pages of another template under the same URLs are skipped). */
export const SAMPLE_TRIES = 3 * SAMPLE_PAGES;
/** Pages read in addition when a labelled field looks constant on the induction pages. */
export const EXTRA_PAGES = 6;
/** Share of a sample a recipe is induced from; the rest verifies it. A list's records multiply its pages. */
export const INDUCE_SHARE: Record<'detail' | 'list', number> = { detail: 0.6, list: 0.5 };

/** The seed of one step: the installation's seed (when set) before the step's own parts. */
export const preparationSeed = (base: string, ...parts: Array<string | number>): string => [...(base ? [base] : []), ...parts].join('|');

/** A sample's pages (snapshot ids) split into those a recipe is induced from and those that verify it. */
export function splitSample(ids: readonly string[], type: 'detail' | 'list', seed: string): { induce: string[]; verify: string[] } {
  const ordering = sampleOrder(ids, `${seed}|split`);
  const cut = Math.ceil(ordering.length * INDUCE_SHARE[type]);
  return { induce: ordering.slice(0, cut), verify: ordering.slice(cut) };
}
