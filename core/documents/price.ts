/**
 * What a document costs on top of the configuration that fetched it (or of an upload's one credit):
 * PDF pages past the first 50, one credit per started block of 50. The same rule on every surface
 * (Fetch, crawls, Batch, MCP, uploads), charged only with a conversion that succeeded.
 *
 * Why PDFs and why 50: a PDF's cost grows with its pages (each page is laid out: lines, columns,
 * tables); office files are read in one pass over XML whose size the inflated-size cap bounds. A
 * 50-page PDF converts in about the time a rendered page takes; 50 pages more cost about as much
 * again (bench/documents.ts: 300 pages in a few seconds of a worker thread).
 */
import type { DocumentInfo } from '../../engine';

/** PDF pages included in any conversion's price. */
export const DOCUMENT_PAGES_INCLUDED = 50;
/** Each started block of this many PDF pages past the included ones costs one credit. */
export const DOCUMENT_PAGES_PER_CREDIT = 50;
/** An upload to POST /v1/documents: the price of a plain fetch, for the conversion alone. */
export const UPLOAD_CREDITS = 1;

export function documentSurcharge(info: Pick<DocumentInfo, 'format' | 'pages'>): number {
  if (info.format !== 'pdf' || info.pages === null || info.pages <= DOCUMENT_PAGES_INCLUDED) return 0;
  return Math.ceil((info.pages - DOCUMENT_PAGES_INCLUDED) / DOCUMENT_PAGES_PER_CREDIT);
}

/** The rule in words, for the OpenAPI document and tool descriptions. */
export const DOCUMENT_PRICE_RULE =
  `A document costs the same as the fetch that brought it (an upload: ${UPLOAD_CREDITS} credit), plus 1 credit per started ${DOCUMENT_PAGES_PER_CREDIT} PDF pages past the first ${DOCUMENT_PAGES_INCLUDED} ` +
  '(a 120-page PDF fetched plainly: 1 + 2 = 3 credits); charged only when the conversion succeeds.';
