/**
 * The generated Extract sites as sample pages, rendered in-process (the generators build each page's
 * HTML and truth without a server): what preparation would have fetched, split the way preparation
 * splits a sample into induction and held-out pages.
 */
import { induceList, induceRole, verifyRole, type SamplePage } from '../../../engine/extract';
import type { RoleRecipe } from '../../../engine/extract/recipe-data';
import type { GeneratedSite, Truth } from '../../fixtures/extract-sites/sites';

export const urlOf = (site: GeneratedSite, path: string): string => `http://${site.host}${path}`;

export function samples(site: GeneratedSite, paths: readonly string[]): SamplePage[] {
  return paths.map((path) => {
    const page = site.pages.get(path);
    if (!page) throw new Error(`${site.host} has no page ${path}`);
    return { url: urlOf(site, path), html: page.html };
  });
}

export function truthOf(site: GeneratedSite, path: string): Truth {
  const truth = site.pages.get(path)?.truth;
  if (!truth) throw new Error(`${site.host}${path} has no truth`);
  return truth;
}

/** Induces a detail kind on `induce` and verifies it on `verify`; throws with the engine's reason when either fails. */
export function learnDetail(site: GeneratedSite, induce: readonly string[], verify: readonly string[]): RoleRecipe {
  const induced = induceRole(`${site.host}_detail`, samples(site, induce));
  if (!induced.ok) throw new Error(`induction failed on ${site.host}: ${induced.detail}`);
  const verified = verifyRole({ ...induced.role, type: 'detail' }, samples(site, verify));
  if (!verified.ok) throw new Error(`verification failed on ${site.host}: ${verified.detail}`);
  return verified.role;
}

/** The same for a list kind. */
export function learnList(site: GeneratedSite, induce: readonly string[], verify: readonly string[]): RoleRecipe {
  const induced = induceList(`${site.host}_list`, samples(site, induce));
  if (!induced.ok) throw new Error(`list induction failed on ${site.host}: ${induced.detail}`);
  const verified = verifyRole(induced.role, samples(site, verify));
  if (!verified.ok) throw new Error(`list verification failed on ${site.host}: ${verified.detail}`);
  return verified.role;
}
