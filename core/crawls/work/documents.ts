/**
 * A crawl page that answers as a document (PDF, DOCX, PPTX, XLSX, ODF, CSV): never read for links.
 * With the crawl's `include_documents` (the default) it is a result like any page, and a kept page
 * (`output_format`) stores the document converted in the worker's document pool, as Markdown or as
 * its structure in HTML, priced by its pages like a Fetch (core/documents/price.ts). A conversion that
 * fails (a hostile or broken file) leaves the page failed and unbilled. Without `include_documents`
 * the page is skipped and unbilled.
 */
import { type DocumentFormat, type DocumentPool } from '../../../engine';
import { documentOf } from '../../documents/fetch';
import { documentSurcharge } from '../../documents/price';
import type { PageFetch } from './fetcher';

export interface CrawlDocuments {
  pool: DocumentPool;
  /** Documents are results (`include_documents`, default true); else skipped. */
  include: boolean;
  /** A kept document's stored form: the crawl's output format. */
  output?: 'html' | 'markdown';
}

export type CrawlDocument =
  | { kind: 'skipped'; detail: string }
  /** A result not kept (no output format, or the start page): nothing converted. */
  | { kind: 'result' }
  | { kind: 'kept'; format: DocumentFormat; text: string; surcharge: number }
  | { kind: 'failed'; detail: string };

/** What becomes of a fetched page that is a document, or null when it is not one. */
export async function crawlDocument(documents: CrawlDocuments, page: Extract<PageFetch, { ok: true }>, keep: boolean): Promise<CrawlDocument | null> {
  const found = documentOf(page);
  if (!found) return null;
  if (!documents.include) return { kind: 'skipped', detail: `The page is a document (${found.format ?? 'legacy Office'}) and the crawl skips documents.` };
  if (!keep || !documents.output) return { kind: 'result' };
  const converted = await documents.pool.convert(page.body, {
    ...(page.contentType ? { contentType: page.contentType } : {}),
    ...(found.fileName ? { fileName: found.fileName } : {}),
    output: documents.output,
  });
  if (!converted.ok) return { kind: 'failed', detail: `The document could not be converted (${converted.code}): ${converted.detail}` };
  return { kind: 'kept', format: converted.format, text: converted.text, surcharge: documentSurcharge(converted.document) };
}
