/**
 * The steps of a domain preparation (each run by an activity of the same name), at the service's own expense (nothing is billed): discovering the
 * domain's page kinds (discovery.ts), fetching a sample of each kind in mode=auto into content-addressed
 * snapshots through the crawl's machinery (pages.ts), inducing a role's recipe from one part of the
 * sample and verifying it on the rest, and recording the outcome. Activities take and return snapshot
 * ids, never pages, so a retried or replayed step works from the same bytes.
 */
import { ALGORITHM_VERSION, type RoleRecipe } from '../../../engine';
import { endPreparation } from '../ends';
import { extractCollections, recipeId, type PreparationState, type RoleStatus } from '../store';
import { belongs, EXTRA_PAGES, induceList, induceRole, pageStructure, preparationSeed, SAMPLE_PAGES, SAMPLE_TRIES, sampleOrder, splitSample, standardMapping, verifyRole, type Kind } from '../../../engine';
import type { Discovery, Draft, FinishInput, RoleOutcome, Sample } from '../preparation';
import type { Db } from 'mongodb';
import type { RobotsReader } from '../../../engine';
import type { CrawlRuntime } from '../../crawls/work/runtime';
import type { WorkContext } from '../../jobs/work';
import { forEachLimited } from '../../crawls/work/pages';
import { discovery } from './discovery';
import { preparationPages } from './pages';

export { EXTRACT_SNAPSHOTS } from './pages';

const CONCURRENCY = 3;

export interface PreparationDeps {
  db: Db;
  /** robots.txt per origin (discovery reads its sitemaps there). */
  robots: RobotsReader;
  /** The worker's crawl machinery, shared with crawls. */
  runtime: CrawlRuntime;
  /** The step running now, for its signal and heartbeats. */
  current: () => WorkContext;
  /** EXTRACT_SAMPLE_SEED: a preparation's samples are drawn from the domain, kind and attempt, and this. */
  seed?: string;
}

export function preparationSteps(deps: PreparationDeps) {
  const { domains, recipes } = extractCollections(deps.db);
  const pages = preparationPages(deps.db, deps.runtime, deps.current);
  const seedBase = deps.seed ?? '';
  const discover = discovery(pages, deps.robots, seedBase);

  /** Snapshots of up to `limit` pages of the kind, in the attempt's order, a few at a time. */
  async function takeSample(kind: Kind, ordered: readonly string[], limit: number): Promise<{ ids: string[]; unusable: number; other: number; rendered: number; tried: Set<string> }> {
    const ids: string[] = [];
    const tried = new Set<string>();
    let unusable = 0;
    let other = 0;
    let rendered = 0;
    const known = await pages.load(Object.values(kind.fetched ?? {}));
    const byUrl = new Map(known.map((page) => [page.url, page]));
    await forEachLimited(ordered.slice(0, SAMPLE_TRIES), CONCURRENCY, async () => ids.length >= limit, async (url) => {
      tried.add(url);
      const stored = byUrl.get(url);
      const opened = stored ? { ok: true as const, page: stored, structure: pageStructure(stored.html, stored.url) } : await pages.open(url);
      if (!opened.ok) {
        unusable++;
        return;
      }
      if (!belongs(kind, opened.structure)) {
        other++;
        deps.current().heartbeat();
        return;
      }
      if (ids.length >= limit || ids.includes(opened.page.id)) return;
      ids.push(opened.page.id);
      if (opened.page.rendered) rendered++;
    });
    return { ids: ids.sort(), unusable, other, rendered, tried };
  }

  return {
    async setState(domain: string, state: PreparationState, roles?: RoleStatus[]): Promise<void> {
      await domains.updateOne({ _id: domain, status: 'preparing' }, { $set: { state, updated_at: new Date(), ...(roles ? { roles } : {}) } });
    },

    /** Kinds from the sitemaps and a bounded crawl from the home page, by URL pattern and structure. */
    async discover(domain: string): Promise<Discovery> {
      return discover.discover(domain);
    },

    /** One kind per example URL, its siblings the URLs of the same shape and structure. */
    async examples(domain: string, examples: string[]): Promise<Discovery> {
      return discover.examples(domain, examples);
    },

    /** Fetches the attempt's sample of a kind and splits it: part to induce from, the rest to verify on. */
    async sample(domain: string, kind: Kind, attempt: number): Promise<Sample> {
      const seed = preparationSeed(seedBase, domain, kind.role, attempt);
      const ordered = sampleOrder(kind.urls, seed);
      const { ids, unusable, other, rendered, tried } = await takeSample(kind, ordered, SAMPLE_PAGES);
      const { induce, verify } = splitSample(ids, kind.type, seed);
      const spare = ordered.filter((url) => !tried.has(url)).slice(0, 2 * EXTRA_PAGES);
      return {
        role: kind.role,
        type: kind.type,
        url: kind.urls[0] ?? '',
        induce,
        verify,
        unusable,
        other,
        rendered: rendered * 2 > ids.length,
        ...(spare.length > 0 && kind.type === 'detail' ? { spare: { role: kind.role, type: kind.type, urls: spare, ...(kind.structure ? { structure: kind.structure } : {}) } } : {}),
      };
    },

    async induce(sample: Sample): Promise<Draft> {
      if (sample.induce.length === 0) {
        return { ok: false, reason: 'unusable', detail: `No sampled page gave usable HTML (${sample.unusable} tried${sample.other ? `, ${sample.other} of another kind` : ''}).` };
      }
      const render = sample.rendered ? 'browser' : 'http';
      if (sample.type === 'list') {
        const induced = induceList(sample.role, await pages.samples(sample.induce), render);
        return induced.ok ? { ok: true, role: { ...induced.role, type: sample.type, url: sample.url || induced.role.url } } : { ok: false, reason: induced.reason, detail: induced.detail };
      }
      let induced = induceRole(sample.role, await pages.samples(sample.induce), render);
      // A labelled field with one value on every page may be constant in this sample only: read a few
      // more pages of the kind (when it has them) and induce again on all of them.
      let extra = 0;
      const looked = induced.ok ? (induced.constant ?? []) : [];
      if (looked.length > 0 && sample.spare) {
        const more = await takeSample(sample.spare, sample.spare.urls, EXTRA_PAGES);
        const added = more.ids.filter((id) => !sample.induce.includes(id) && !sample.verify.includes(id));
        if (added.length > 0) {
          extra = added.length;
          induced = induceRole(sample.role, await pages.samples([...sample.induce, ...added]), render);
        }
      }
      if (!induced.ok) return { ok: false, reason: induced.reason, detail: induced.detail };
      const fields = induced.role.fields.map((field) => (field.constant ? { ...field, constant: { ...field.constant, extra } } : field));
      const resampled = looked.length > 0 ? { resampled: { fields: looked, pages: extra } } : {};
      return { ok: true, role: { ...induced.role, fields, ...resampled, type: sample.type, url: sample.url || induced.role.url } };
    },

    async verify(draft: Omit<RoleRecipe, 'minSimilarity'>, verifyIds: string[]): Promise<RoleOutcome> {
      const verified = verifyRole(draft, await pages.samples(verifyIds));
      if (!verified.ok) return { ok: false, role: draft.role, url: draft.url, reason: verified.reason === 'too_few_pages' ? 'too_few_pages' : 'not_verified', detail: verified.detail };
      const standard = standardMapping(verified.role.fields);
      return { ok: true, recipe: { ...verified.role, ...(standard ? { standard } : {}) }, detail: verified.detail };
    },

    /**
     * Writes the recipe (a new version) and ends the record through the job-end routine
     * (core/extract/ends.ts: a failure that does not consume the slot gives it back); a re-preparation
     * of a ready domain only moves its recipe on or notes why it could not.
     */
    async finish(input: FinishInput): Promise<void> {
      const now = new Date();
      const record = await domains.findOne({ _id: input.domain });
      if (!record || record.status !== (input.refresh ? 'ready' : 'preparing')) return;
      const roles: RoleStatus[] = input.outcomes.map((outcome) =>
        outcome.ok
          ? { role: outcome.recipe.role, status: 'ready', url: outcome.recipe.url, detail: outcome.detail }
          : { role: outcome.role, status: 'failed', url: outcome.url, detail: outcome.detail },
      );
      const ready = input.outcomes.flatMap((outcome) => (outcome.ok ? [outcome.recipe] : []));
      if (!input.failure && ready.length > 0) {
        const version = (record.recipe_version ?? 0) + 1;
        const verticals = ready.some((role) => role.standard) ? ['real_estate'] : [];
        await recipes.updateOne(
          { _id: recipeId(input.domain, version) },
          { $setOnInsert: { domain: input.domain, version, algorithm: ALGORITHM_VERSION, created_at: now.toISOString(), verticals, roles: ready } },
          { upsert: true },
        );
        if (!input.refresh) {
          await endPreparation(deps.db, input.domain, { status: 'ready', roles, recipeVersion: version, verticals, startedBy: record.started_by }, now);
          return;
        }
        await domains.updateOne(
          { _id: input.domain },
          { $set: { status: 'ready', state: 'ready', roles, recipe_version: version, verticals, updated_at: now }, $unset: { failure: '', refresh_failure: '' } },
        );
        return;
      }
      const failure = input.failure ?? { code: 'preparation_exhausted' as const, detail: 'No extraction could be verified.' };
      if (input.refresh) {
        await domains.updateOne({ _id: input.domain }, { $set: { refresh_failure: { ...failure, at: now } } });
        return;
      }
      await endPreparation(deps.db, input.domain, { status: 'failed', roles, failure, startedBy: record.started_by }, now);
    },
  };
}

export type PreparationSteps = ReturnType<typeof preparationSteps>;
