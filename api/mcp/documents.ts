/**
 * The MCP `convert_document` tool: a file the agent has, sent as base64, converted as
 * `POST /v1/documents` converts an upload (core/documents/commands.ts), priced and refused alike.
 * The decoded file is bounded by DOCUMENT_MAX_BYTES, and the whole MCP request by BODY_LIMIT (25 MB
 * of base64, about 18 MB of file). A document at a URL is `fetch_page`'s.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../core/accounts';
import { withSlotUntil } from '../accounts/concurrency';
import type { ApiDeps } from '../deps';
import { checkBody, type ObjectSchema } from '../http/routes';
import { DOCUMENT_PRICE_RULE } from '../../core/documents/price';
import { FETCH_QUERY, fetchIssues } from '../../core/fetch/params';

/** The tool as tools.ts lists it (declared here too, so the two modules do not import each other). */
interface DocumentTool extends Tool {
  run(principal: Principal, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

const INPUT: ObjectSchema & { type: 'object' } = {
  type: 'object',
  additionalProperties: false,
  required: ['content_base64'],
  properties: {
    content_base64: { type: 'string', minLength: 1, description: 'The file, base64-encoded (at most DOCUMENT_MAX_BYTES once decoded, default 50 MB, and within the request size the server accepts).' },
    file_name: { type: 'string', minLength: 1, maxLength: 255, description: 'The file’s name; its extension names the format when the bytes and content_type do not.' },
    content_type: { type: 'string', minLength: 1, maxLength: 255, description: 'The file’s media type, for example application/pdf.' },
    response_type: { type: 'string', enum: ['markdown', 'plaintext'], default: 'markdown', description: 'Markdown (default) or plain text.' },
    document_page_markers: FETCH_QUERY.properties.document_page_markers ?? {},
    document_speaker_notes: FETCH_QUERY.properties.document_speaker_notes ?? {},
  },
};

/** Base64 characters that decode to more than the cap are refused before decoding. */
const encodedLength = (bytes: number): number => Math.ceil(bytes / 3) * 4;

export function convertDocumentTool(deps: ApiDeps): DocumentTool {
  const { documents } = deps.services;
  return {
    name: 'convert_document',
    description:
      'Convert a file you have (PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, CSV), sent as base64, to Markdown (default) or plain text, keeping headings, lists, tables, links and page boundaries; ' +
      `the document's metadata (format, pages, title, author, pages without a text layer) comes in _meta.document. ${DOCUMENT_PRICE_RULE} For a document at a URL, use fetch_page.`,
    inputSchema: INPUT,
    async run(principal, args, signal): Promise<CallToolResult> {
      const input = checkBody(INPUT, args, fetchIssues) as { content_base64: string; file_name?: string; content_type?: string; response_type?: 'markdown' | 'plaintext'; document_page_markers?: boolean; document_speaker_notes?: boolean };
      documents.checkSize(input.content_base64.length > encodedLength(documents.maxBytes) + 4 ? documents.maxBytes + 1 : 0);
      const bytes = Buffer.from(input.content_base64, 'base64');
      documents.checkSize(bytes.length);
      return withSlotUntil(deps.accounts, principal, signal, async () => {
        const converted = await documents.convert(
          principal,
          { bytes, ...(input.content_type ? { contentType: input.content_type } : {}), ...(input.file_name ? { fileName: input.file_name } : {}) },
          { responseType: input.response_type ?? 'markdown', json: false, pageMarkers: input.document_page_markers !== false, speakerNotes: input.document_speaker_notes === true },
        );
        const { document } = converted;
        const body = typeof converted.shaped.body === 'string' ? converted.shaped.body : converted.shaped.body.toString('utf8');
        return {
          content: [{ type: 'text', text: body }],
          _meta: {
            credits: converted.cost,
            document: { format: document.format, pages: document.pages, title: document.title, author: document.author, created: document.created, modified: document.modified, pages_without_text: document.pagesWithoutText },
          },
        };
      });
    },
  };
}
