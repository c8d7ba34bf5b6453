/**
 * `extract` on Fetch: the recipe of the page's registrable domain, checked before anything is fetched
 * (an unprepared domain, a vertical the recipe lacks and an unknown `extract_fields` entry cost nothing),
 * then interpreted on the fetched page: `{parsed, html}`. A page no role recognises is REQS007
 * `page_not_recognised` and is not charged. Required fields a page no longer gives are named in the
 * `X-Extract-Warning` header (and a re-preparation is asked for): the answer carries what could be
 * found, never silent empties. So are `extract_fields` this page does not give. The recipes
 * themselves (look-up, cache, staleness) are core/extract/recipes.ts's.
 */
import { problem } from '../../base/errors';
import type { RecipeCache, RecipeDoc } from '../extract/recipes';
import { servesVertical } from '../../engine';
import { decodeHtml, detectCharset, EXTRACT_PAGE_TASKS, extractEnvelope, registrableDomainOf, STANDARD_FIELDS, type HtmlOutputs, type Page } from '../../engine';
import type { FetchParams } from './params';
import { htmlSourceOf, type Shaped } from './respond';

export const EXTRACT_WARNING_HEADER = 'X-Extract-Warning';

const notPrepared = (detail: string, reason: string) =>
  problem('REQS007', `${detail} Prepare it with POST /v1/extract/prepared-domains, then poll GET /v1/extract/prepared-domains/{domain} until it is ready.`, {
    members: { reason },
  });

/** The recipe for the request, or the refusal a caller gets before any page is fetched. */
export async function recipeForRequest(cache: RecipeCache, params: FetchParams): Promise<RecipeDoc> {
  const domain = registrableDomainOf(params.url.hostname) ?? params.url.hostname;
  const recipe = await cache.recipeFor(domain);
  if (!recipe) throw notPrepared(`Extract is not prepared for ${domain}.`, 'domain_not_prepared');
  if (params.extract === 'standard' && !servesVertical(recipe, 'real_estate')) {
    throw problem('REQS007', `extract=standard maps the canonical real-estate schema; ${domain} is not prepared as real estate. Use extract=auto for its own field names.`, {
      members: { reason: 'vertical_not_supported' },
    });
  }
  const known = new Set<string>();
  for (const role of recipe.roles) {
    let names = params.extract === 'standard' ? Object.keys(role.standard ?? {}) : role.fields.map((field) => field.name);
    // A list page answers its records as `items` (and `next_page`): their fields are `items.<name>`.
    if (role.type === 'list') names = ['items', ...names.map((name) => `items.${name}`), ...(role.list?.nextPage && params.extract !== 'standard' ? ['next_page'] : [])];
    for (const name of names) {
      const parts = name.split('.');
      for (let length = 1; length <= parts.length; length++) known.add(parts.slice(0, length).join('.'));
    }
  }
  const unknown = (params.extractFields ?? []).find((field) => !known.has(field));
  if (unknown !== undefined) {
    const choices = params.extract === 'standard' ? STANDARD_FIELDS.join(', ') : [...known].sort().join(', ');
    throw problem('REQS004', `extract_fields: "${unknown}" is not a field of ${domain} (fields: ${choices}).`, { members: { parameter: 'extract_fields' } });
  }
  return recipe;
}

export async function shapeExtract(
  page: Page,
  params: FetchParams,
  recipe: RecipeDoc,
  status: number,
  rendered: boolean,
  outputs: HtmlOutputs,
  signal?: AbortSignal,
): Promise<Shaped & { warning?: string; stale: boolean }> {
  // Parsed once, where the page's size says (inline or on a worker thread): its signature picks the role, the same tree gives its fields.
  const applied = await outputs.runTask(
    EXTRACT_PAGE_TASKS,
    'apply',
    htmlSourceOf(page),
    { url: page.finalUrl, roles: recipe.roles, standard: params.extract === 'standard', ...(params.extractFields && params.extractFields.length > 0 ? { fields: params.extractFields } : {}) },
    signal,
  );
  if (!applied.found) {
    const needsBrowser = !rendered && recipe.roles.some((candidate) => candidate.render === 'browser');
    throw needsBrowser
      ? problem('REQS007', `No prepared kind of page of ${recipe.domain} matches this page as fetched; its pages were prepared rendered: retry with js_render=true or mode=auto.`, {
          members: { reason: 'page_not_recognised' },
        })
      : notPrepared(`No prepared kind of page of ${recipe.domain} matches this page.`, 'page_not_recognised');
  }
  // A page fetched without a browser is its bytes; read as UTF-8, the envelope reuses them.
  const utf8 = page.html === undefined && detectCharset(page.body, page.contentType) === 'utf-8';
  const html = page.html ?? decodeHtml(page.body, page.contentType);
  // A field asked for that this page does not give (another kind's, or an optional one) is named, never silently empty.
  const warnings = [
    ...(applied.missing.length > 0 ? [`fields missing on this page, the recipe may be stale: ${applied.missing.join(', ')}`] : []),
    ...(applied.absent.length > 0 ? [`extract_fields not on this page (a ${applied.role} page): ${applied.absent.join(', ')}`] : []),
  ];
  return {
    status,
    contentType: 'application/json; charset=utf-8',
    body: extractEnvelope(applied.parsed, html, { bytes: page.body, utf8 }),
    ...(warnings.length > 0 ? { warning: warnings.join('; ') } : {}),
    stale: applied.missing.length > 0,
  };
}
