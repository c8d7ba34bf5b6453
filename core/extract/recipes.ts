/**
 * The recipes Fetch reads: the ready recipe of a registrable domain, kept for a few seconds per process
 * (a Fetch with `extract` reads it on every request), and the staleness report a page that no longer
 * gives every required field makes, which asks for a re-preparation.
 */
import type { Db } from 'mongodb';
import type { ExtractCommands } from './commands';
import { extractCollections, recipeId, type RecipeDoc } from './store';

const CACHE_MS = 10_000;

export interface RecipeCache {
  recipeFor(domain: string): Promise<RecipeDoc | undefined>;
  /** A page of the domain no longer gave every required field: ask for a re-preparation (never throws). */
  reportStale(domain: string): Promise<void>;
}

export function createRecipeCache(db: Db, options: { onStale?: (domain: string) => Promise<unknown>; now?: () => number } = {}): RecipeCache {
  const now = options.now ?? Date.now;
  const { domains, recipes } = extractCollections(db);
  const cached = new Map<string, { at: number; recipe: RecipeDoc }>();
  return {
    async recipeFor(domain) {
      const hit = cached.get(domain);
      if (hit && now() - hit.at < CACHE_MS) return hit.recipe;
      const record = await domains.findOne({ _id: domain });
      const recipe = record?.recipe_version ? ((await recipes.findOne({ _id: recipeId(domain, record.recipe_version) })) ?? undefined) : undefined;
      // Only recipes are kept: a domain that becomes ready is served on the next request.
      if (recipe) cached.set(domain, { at: now(), recipe });
      return recipe;
    },
    async reportStale(domain) {
      await options.onStale?.(domain).catch(() => undefined);
    },
  };
}

/** The recipes every Fetch caller reads, asking the Extract commands for a re-preparation when a page shows one is stale. */
export function fetchRecipes(db: Db, commands: Pick<ExtractCommands, 'requestRefresh'>): RecipeCache {
  return createRecipeCache(db, { onStale: (domain) => commands.requestRefresh(domain) });
}

export type { RecipeDoc } from './store';
