/**
 * The domain preparation activities: each runs one step of core/extract/prepare/steps.ts with its
 * context. Steps take and return snapshot ids, never pages, so a retried or replayed step works from
 * the same bytes.
 */
import type { RoleRecipe } from '../../engine';
import type { Discovery, Draft, FinishInput, Kind, PreparationState, RoleOutcome, RoleStatus, Sample } from '../../core/extract/preparation';
import type { PreparationSteps } from '../../core/extract/prepare/steps';
import { asActivity } from '../failures';

export function extractActivities(steps: PreparationSteps) {
  return {
    async extractSetState(domain: string, state: PreparationState, roles?: RoleStatus[]): Promise<void> {
      await steps.setState(domain, state, roles);
    },
    /** Kinds from the sitemaps and a bounded crawl from the home page, by URL pattern and structure. */
    async extractDiscover(domain: string): Promise<Discovery> {
      return asActivity(() => steps.discover(domain));
    },
    /** One kind per example URL, its siblings the URLs of the same shape and structure. */
    async extractExamples(domain: string, examples: string[]): Promise<Discovery> {
      return asActivity(() => steps.examples(domain, examples));
    },
    /** Fetches the attempt's sample of a kind and splits it: part to induce from, the rest to verify on. */
    async extractSample(domain: string, kind: Kind, attempt: number): Promise<Sample> {
      return asActivity(() => steps.sample(domain, kind, attempt));
    },
    async extractInduce(sample: Sample): Promise<Draft> {
      return asActivity(() => steps.induce(sample));
    },
    async extractVerify(draft: Omit<RoleRecipe, 'minSimilarity'>, verifyIds: string[]): Promise<RoleOutcome> {
      return steps.verify(draft, verifyIds);
    },
    /** Writes the recipe (a new version) and ends the record through the job-end routine. */
    async extractFinish(input: FinishInput): Promise<void> {
      await steps.finish(input);
    },
  };
}
