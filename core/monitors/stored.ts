/**
 * A check's stored pages, read by `_id` only: its parts are numbered from 0 (`partId`) and each lists
 * the pages it stored, and the pages gone since the last check are listed by the part numbered -1.
 * FerretDB answers a look-up by `_id` (or `$in` of them) from its key, while a filter on any other field
 * reads the whole collection, so a check of the monitor_pages of every check ever kept would cost more
 * with each check of every account.
 */
import type { MonitorStore, PageDoc, PartDoc } from './store';
import { partId } from './store';

/** The part that lists a check's removed pages. */
export const REMOVED_PART = -1;
/** Part documents asked for in one look-up. */
const PART_WINDOW = 64;
/** Page documents asked for in one look-up. */
const PAGE_WINDOW = 500;

/** The parts written so far (numbered parts are written in order, so the first one missing ends them) and the removed part. */
export async function storedParts(store: MonitorStore, checkId: string): Promise<PartDoc[]> {
  const parts: PartDoc[] = [];
  for (let from = REMOVED_PART; ; from += PART_WINDOW) {
    const numbers = Array.from({ length: PART_WINDOW }, (_, k) => from + k);
    const found = new Map((await store.parts.find({ _id: { $in: numbers.map((n) => partId(checkId, n)) } }).toArray()).map((doc) => [doc.part, doc]));
    for (const n of numbers) {
      const doc = found.get(n);
      if (doc) parts.push(doc);
      else if (n !== REMOVED_PART) return parts;
    }
  }
}

/** The pages the parts list, in the order of `ids`. */
export async function pagesById(store: MonitorStore, ids: readonly string[]): Promise<PageDoc[]> {
  const pages: PageDoc[] = [];
  for (let start = 0; start < ids.length; start += PAGE_WINDOW) pages.push(...(await store.pages.find({ _id: { $in: ids.slice(start, start + PAGE_WINDOW) } }).toArray()));
  return pages;
}

/** What a check stored: its parts and the pages they list. */
export async function storedCheck(store: MonitorStore, checkId: string): Promise<{ parts: PartDoc[]; pages: PageDoc[] }> {
  const parts = await storedParts(store, checkId);
  return { parts, pages: await pagesById(store, parts.flatMap((part) => part.page_ids ?? [])) };
}

/** Pages in the order of their URLs (events and the check's changes are read so). */
export const byUrl = (a: PageDoc, b: PageDoc): number => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
