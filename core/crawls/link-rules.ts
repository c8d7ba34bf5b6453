/**
 * Which links a crawl follows and which pages it opens, from what its body asked: the one rule the
 * crawl's slices (work/slice.ts) and a crawl-based monitor's checks (core/monitors/pages.ts) apply, so
 * `include_patterns`, `exclude_patterns`, `depth`, `include_documents` and the domain scope mean the
 * same on both.
 */
import { documentFormatOfName } from '../../engine';
import { normalizeLink, passesPatterns, scopeOf, type Normalized, type UrlScope } from './urls';

export interface LinkRules {
  scope: UrlScope;
  include: readonly string[];
  exclude: readonly string[];
  /** false: links whose file name says document (report.pdf) are dropped. */
  includeDocuments: boolean;
}

export function linkRules(startUrl: string, options: { include: readonly string[]; exclude: readonly string[]; includeDocuments?: boolean }): LinkRules {
  return { scope: scopeOf(startUrl), include: options.include, exclude: options.exclude, includeDocuments: options.includeDocuments !== false };
}

export type Admitted = Normalized | { ok: false; reason: 'patterns' | 'document' };

/** A link as the crawl takes it (normalized, in scope, within the patterns, a document only when documents are kept), or why not. */
export function admitLink(href: string, base: URL | string, rules: LinkRules): Admitted {
  const link = normalizeLink(href, base, rules.scope);
  if (!link.ok) return link;
  if (!passesPatterns(link.url, rules.include, rules.exclude)) return { ok: false, reason: 'patterns' };
  if (!rules.includeDocuments && documentFormatOfName(new URL(link.url).pathname)) return { ok: false, reason: 'document' };
  return link;
}

/** Whether a page `depth` link steps from the start is opened for its links (`depth` of the body: none is no limit). */
export const opensAt = (depth: number, limit: number | undefined): boolean => limit === undefined || depth < limit;
