/**
 * Files the caller has (POST /v1/documents, the MCP `convert_document` tool): read under the cap,
 * converted in the process's document pool, priced like a plain fetch (1 credit) plus the page rule
 * (price.ts) and charged only when the conversion succeeded; a refused or hostile file costs nothing.
 * The caller holds its concurrency slot around it, as around a Fetch.
 */
import type { Principal } from '../accounts';
import type { Charging } from '../accounts/charging';
import { problem } from '../../base/errors';
import type { DocumentInfo, DocumentOutput, DocumentPool } from '../../engine';
import { holdCredits } from '../fetch/billing';
import type { Shaped } from '../fetch/respond';
import { presentDocument } from './fetch';
import { documentSurcharge, UPLOAD_CREDITS } from './price';
import { documentProblem } from './problems';
import { readUpload, uploadTooLarge, type Upload, type UploadHeaders } from './upload';

export interface UploadOptions {
  /** The text answered (markdown by default); with `json`, the `document.content` member. */
  responseType?: 'markdown' | 'plaintext';
  /** The JSON envelope: `html` (the document's structure) and `document`. */
  json: boolean;
  pageMarkers: boolean;
  speakerNotes: boolean;
}

export interface Converted {
  shaped: Shaped;
  cost: number;
  document: DocumentInfo;
}

export function createDocumentCommands(deps: { pool: DocumentPool; accounts: { charging: Pick<Charging, 'reservePooled'> }; maxBytes: number }) {
  const { pool, maxBytes } = deps;
  return {
    /** DOCUMENT_MAX_BYTES. */
    maxBytes,

    /** The upload from the request body as it arrives (413 past the cap, 400 for a body with no file). */
    read: (chunks: AsyncIterable<Buffer>, headers: UploadHeaders): Promise<Upload> => readUpload(chunks, headers, maxBytes),

    /** The pool's workers, busy and queued now (operators' view; tests wait on it). */
    stats: () => pool.stats(),

    /** Bytes the caller sent another way (MCP: base64): the same cap. */
    checkSize(bytes: number): void {
      if (bytes > maxBytes) throw uploadTooLarge(maxBytes);
    },

    /** Converts an upload for the principal and charges it; refusals are thrown as problems, nothing charged. */
    async convert(principal: Principal, upload: Upload, options: UploadOptions): Promise<Converted> {
      const billing = holdCredits(deps.accounts.charging, principal);
      await billing.open(UPLOAD_CREDITS);
      try {
        const text = options.responseType ?? 'markdown';
        const output: DocumentOutput = options.json ? 'html' : text;
        const converted = await pool.convert(upload.bytes, {
          ...(upload.contentType ? { contentType: upload.contentType } : {}),
          ...(upload.fileName ? { fileName: upload.fileName } : {}),
          output,
          ...(options.json && options.responseType ? { also: options.responseType } : {}),
          pageMarkers: options.pageMarkers,
          speakerNotes: options.speakerNotes,
        });
        if (!converted.ok) throw documentProblem(converted);
        const cost = UPLOAD_CREDITS + documentSurcharge(converted.document);
        if (!(await billing.afford(cost))) throw billing.refusal() ?? problem('AUTH004', `Not enough credits for the document's ${converted.document.pages ?? 0} pages (${cost} credits).`);
        await billing.settle(cost);
        const shaped: Shaped = options.json
          ? { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify({ html: converted.text, document: presentDocument(converted.document, converted.also) }) }
          : { status: 200, contentType: text === 'markdown' ? 'text/markdown; charset=utf-8' : 'text/plain; charset=utf-8', body: converted.text };
        return { shaped, cost, document: converted.document };
      } finally {
        await billing.close();
      }
    },
  };
}

export type DocumentCommands = ReturnType<typeof createDocumentCommands>;
