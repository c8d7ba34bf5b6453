/**
 * Documents in a Fetch answer (the Fetch route, MCP `fetch_page`, Batch tasks): every answer the
 * target gives is checked for a document (its Content-Type, its bytes, or an octet-stream's file
 * name), and a document is shaped by what the request asks for:
 *
 *   json_response                    ─> the envelope with `html` (the document's structure as HTML) and a
 *                                       `document` object (format, pages, title, author, created,
 *                                       modified, pages_without_text; `content` with response_type)
 *   css_extractor, autoparse, outputs ─> run on the document's HTML
 *   response_type=markdown|plaintext  ─> the converted text, with page markers unless turned off
 *   anything else                     ─> the document's own bytes, as they came (never relabelled)
 *
 * Conversions run in the process's document pool (worker threads, capped in time, memory and
 * inflated size); a failure is the engine's stable code as a 4xx problem, never charged.
 */
import type { ApiError } from '../../base/errors';
import { detectDocument, fileNameFromDisposition, isHtmlRefused, isLegacyOffice, mimeOfFormat, type DocumentFormat, type HtmlOutputs, type DocumentInfo, type DocumentOutput, type DocumentPool, type DocumentResult, type Page } from '../../engine';
import type { FetchParams } from '../fetch/params';
import { answerStatus, foldHeaders, htmlProblem, shapeResponse, type Shaped } from '../fetch/respond';
import { documentSurcharge } from './price';
import { documentProblem } from './problems';

export type DocumentShaping =
  | { ok: true; shaped: Shaped; surcharge: number; document?: DocumentInfo }
  | { ok: false; error: ApiError; retryable: boolean };

/** A document answer: its format, or null for a legacy Office file (recognised, not read: `document_unsupported`). */
export interface FoundDocument {
  format: DocumentFormat | null;
  fileName?: string;
}

/** The document an answer is, or null; a rendered page never is (render fetches a document's bytes instead). */
export function documentOf(page: Pick<Page, 'html' | 'headers' | 'body' | 'contentType' | 'finalUrl'>): FoundDocument | null {
  if (page.html !== undefined) return null;
  const fileName = fileNameFromDisposition(page.headers.find(([name]) => name === 'content-disposition')?.[1]) ?? pathOf(page.finalUrl);
  const format = detectDocument(page.body, { ...(page.contentType ? { contentType: page.contentType } : {}), ...(fileName ? { fileName } : {}) });
  if (!format && !isLegacyOffice(page.body, page.contentType)) return null;
  return { format, ...(fileName ? { fileName } : {}) };
}

function pathOf(url: string): string | undefined {
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/** The `document` object of JSON answers, in the interface's spelling. */
export function presentDocument(info: DocumentInfo, content?: string): Record<string, unknown> {
  return {
    format: info.format,
    pages: info.pages,
    title: info.title,
    author: info.author,
    created: info.created,
    modified: info.modified,
    pages_without_text: info.pagesWithoutText,
    ...(content !== undefined ? { content } : {}),
  };
}

const textType = (output: 'markdown' | 'plaintext'): string => (output === 'markdown' ? 'text/markdown; charset=utf-8' : 'text/plain; charset=utf-8');

/** The document's shape for the request, or null when the page is not a document. */
/** `outputs`: the HTML outputs that read a document's structure as they read a page (css_extractor, autoparse, outputs). */
export async function shapeDocument(pool: DocumentPool, outputs: HtmlOutputs, page: Page, params: FetchParams, signal?: AbortSignal): Promise<DocumentShaping | null> {
  const found = documentOf(page);
  if (!found) return null;
  const status = answerStatus(page, params);
  const text = params.responseType === 'markdown' || params.responseType === 'plaintext' ? params.responseType : undefined;
  const readsHtml = params.jsonResponse || params.cssExtractor !== undefined || params.autoparse || params.outputs !== undefined;
  if (!readsHtml && !text) {
    // As it came: the target's own type, or the format's when it sent none.
    return { ok: true, surcharge: 0, shaped: { status, contentType: page.contentType ?? (found.format ? mimeOfFormat(found.format) : 'application/octet-stream'), body: page.body } };
  }
  const output: DocumentOutput = readsHtml ? 'html' : (text ?? 'markdown');
  const converted = await pool.convert(page.body, {
    ...(page.contentType ? { contentType: page.contentType } : {}),
    ...(found.fileName ? { fileName: found.fileName } : {}),
    output,
    ...(params.jsonResponse && text ? { also: text } : {}),
    pageMarkers: params.documentPageMarkers,
    speakerNotes: params.documentSpeakerNotes,
  });
  if (!converted.ok) return { ok: false, error: documentProblem(converted), retryable: converted.code === 'documents_busy' };
  try {
    const shaped = await shapeConverted(outputs, page, params, converted, status, text, signal);
    return { ok: true, surcharge: documentSurcharge(converted.document), document: converted.document, shaped };
  } catch (error) {
    // The document's HTML past a parse cap or a thread's budget: refused as a page would be, uncharged.
    if (isHtmlRefused(error)) return { ok: false, error: htmlProblem(error), retryable: error.limit === 'busy' };
    throw error;
  }
}

async function shapeConverted(
  outputs: HtmlOutputs,
  page: Page,
  params: FetchParams,
  converted: DocumentResult,
  status: number,
  text: 'markdown' | 'plaintext' | undefined,
  signal?: AbortSignal,
): Promise<Shaped> {
  if (params.jsonResponse) {
    return {
      status,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({
        html: converted.text,
        status: page.status,
        headers: Object.fromEntries(foldHeaders(page.headers)),
        xhr: [],
        document: presentDocument(converted.document, converted.also),
      }),
    };
  }
  if (converted.output === 'html') {
    // The HTML-reading outputs read the document's structure as they read a page.
    return shapeResponse({ ...page, html: converted.text, body: Buffer.from(converted.text, 'utf8'), contentType: 'text/html; charset=utf-8' }, { ...params, mainContent: false }, outputs, signal);
  }
  return { status, contentType: textType(text ?? 'markdown'), body: converted.text };
}
