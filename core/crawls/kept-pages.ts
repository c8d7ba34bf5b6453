/**
 * A crawl's kept pages (crawls with `output_format`): one blob per page in the blob store
 * (core/jobs/blobs.ts), owned by the crawl, named `<crawl id>|<content id>`, holding the page's URL on
 * its first line and then its HTML. Written whole by the slice that fetched it (a retried slice writes
 * the same page again: ignored), so a reader that finds a page finds all of it.
 */
import type { Db } from 'mongodb';
import { Blobs } from '../jobs/blobs';

export interface KeptPage {
  url: string;
  html: string;
  /** A converted document's format: its text is already in the crawl's output format, served as it is. */
  document?: string;
}

export const keptPageBlob = (crawlId: string, contentId: string): string => `${crawlId}|${contentId}`;

export async function storeKeptPage(db: Db, crawlId: string, contentId: string, page: KeptPage): Promise<void> {
  // A URL as kept never holds a line break nor a tab (normalized), so the first line break ends it, and a
  // tab after it carries a document's format.
  const head = page.document ? `${page.url}\t${page.document}` : page.url;
  await new Blobs(db).put({ kind: 'crawl', id: crawlId }, keptPageBlob(crawlId, contentId), Buffer.from(`${head}\n${page.html}`, 'utf8'));
}

/** The pages of these content ids that the blob store holds. */
export async function readKeptPages(db: Db, crawlId: string, contentIds: string[]): Promise<Map<string, KeptPage>> {
  const found = await new Blobs(db).readMany(contentIds.map((contentId) => keptPageBlob(crawlId, contentId)));
  const pages = new Map<string, KeptPage>();
  for (const contentId of contentIds) {
    const text = found.get(keptPageBlob(crawlId, contentId))?.toString('utf8');
    if (text === undefined) continue;
    const end = text.indexOf('\n');
    const head = end < 0 ? text : text.slice(0, end);
    const tab = head.indexOf('\t');
    const url = tab < 0 ? head : head.slice(0, tab);
    pages.set(contentId, { url, html: end < 0 ? '' : text.slice(end + 1), ...(tab >= 0 ? { document: head.slice(tab + 1) } : {}) });
  }
  return pages;
}
