/**
 * `POST /v1/documents` (our extension): a file the caller has, converted as Fetch converts a document
 * it retrieves. The body is the file with its own Content-Type (a file name from Content-Disposition
 * or `file_name` names the format of an application/octet-stream body), or multipart/form-data with
 * the file as its file part; read as it arrives, refused past DOCUMENT_MAX_BYTES (413).
 *
 *   authenticate ─> validate (REQS004) ─> slot (AUTH008) ─> read (413 / 400) ─> convert in the
 *     document pool, charge 1 credit + the page rule (core/documents) ─> markdown | plaintext | json
 */
import { setCostHeaders, withSlot } from '../accounts/concurrency';
import { API_KEY_QUERY_PROPERTY, authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import { closeAfterAnswer, requestChunks } from '../http/body';
import type { HttpContext } from '../http/context';
import type { JsonSchema, LeanRoute, ObjectSchema, RouteInput } from '../http/routes';
import { markThirdParty } from '../http/third-party';
import { DOCUMENT_PRICE_RULE } from '../../core/documents/price';
import { FETCH_QUERY, fetchIssues } from '../../core/fetch/params';

const fetchParameter = (name: string): JsonSchema => (FETCH_QUERY.properties[name] ?? {}) as JsonSchema;

export const DOCUMENT_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apikey: API_KEY_QUERY_PROPERTY,
    response_type: { type: 'string', enum: ['markdown', 'plaintext'], description: 'The text answered: markdown (default) or plaintext; with json_response, `document.content` in that format.' },
    json_response: { type: 'boolean', description: 'Answer JSON: `html` (the document’s structure as HTML) and `document` {format, pages, title, author, created, modified, pages_without_text, content (with response_type)}.' },
    document_page_markers: fetchParameter('document_page_markers'),
    document_speaker_notes: fetchParameter('document_speaker_notes'),
    file_name: { type: 'string', minLength: 1, maxLength: 255, description: 'The file’s name, for a raw body without a telling Content-Type (application/octet-stream): its extension names the format. Default: the filename of the request’s Content-Disposition.' },
  },
};

async function handleUpload(deps: ApiDeps, ctx: HttpContext, input: RouteInput): Promise<void> {
  const { documents } = deps.services;
  const query = input.query as { response_type?: 'markdown' | 'plaintext'; json_response?: boolean; document_page_markers?: boolean; document_speaker_notes?: boolean; file_name?: string };
  const principal = principalOf(ctx);
  const length = Number(ctx.get('Content-Length') || 0);
  markThirdParty(ctx);
  await withSlot(ctx, deps.accounts, principal, async () => {
    // A body refused before it was read (its declared length) is left unread: the connection closes after the answer.
    const upload = await documents.read(requestChunks(ctx), {
      ...(ctx.get('Content-Type') ? { contentType: ctx.get('Content-Type') } : {}),
      ...(Number.isFinite(length) && length > 0 ? { contentLength: length } : {}),
      ...(ctx.get('Content-Disposition') ? { disposition: ctx.get('Content-Disposition') } : {}),
      ...(query.file_name ? { fileName: query.file_name } : {}),
    }).catch((error: unknown) => {
      if (!ctx.req.readableEnded) closeAfterAnswer(ctx);
      throw error;
    });
    const { shaped, cost } = await documents.convert(principal, upload, {
      ...(query.response_type ? { responseType: query.response_type } : {}),
      json: query.json_response === true,
      pageMarkers: query.document_page_markers !== false,
      speakerNotes: query.document_speaker_notes === true,
    });
    setCostHeaders(ctx, cost);
    ctx.status = shaped.status;
    ctx.body = shaped.body;
    ctx.set('Content-Type', shaped.contentType);
  });
}

export function documentRoutes(deps: ApiDeps): LeanRoute[] {
  return [
    {
      lean: true,
      method: 'POST',
      path: '/v1/documents',
      operationId: 'convertDocument',
      summary: 'Extension of this service: convert a file you have (PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, CSV) to Markdown, plain text or JSON.',
      description:
        `The body is the file with its Content-Type, or multipart/form-data with the file as its file part; at most DOCUMENT_MAX_BYTES (default 50 MB), refused while it arrives past that (413 document_too_large, \`limit\` DOCUMENT_MAX_BYTES). ${DOCUMENT_PRICE_RULE} ` +
        'Headings, paragraphs, nested lists, tables, links, reading order across columns and page boundaries are kept; pages without a text layer (scans) are listed in `document.pages_without_text`, not read (no OCR). ' +
        'A hostile or broken file answers its stable code, never charged: document_unsupported (415), document_unreadable, document_encrypted, document_too_complex (422), document_too_large (413); documents_busy (503, Retry-After) when every document worker is busy.',
      tags: ['Documents'],
      security: securityOf('documents'),
      query: DOCUMENT_QUERY,
      body: 'stream',
      rawContent: {
        'application/pdf': { schema: { type: 'string', format: 'binary' } },
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { schema: { type: 'string', format: 'binary' } },
        'application/vnd.openxmlformats-officedocument.presentationml.presentation': { schema: { type: 'string', format: 'binary' } },
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', format: 'binary' } },
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } },
      },
      issues: fetchIssues,
      before: [authenticate(deps, 'documents')],
      responses: {
        200: {
          description: 'The document converted; `X-Request-Cost` says the credits charged.',
          content: { 'text/markdown': {}, 'text/plain': {}, 'application/json': {} },
        },
        413: { description: 'Over DOCUMENT_MAX_BYTES, or another cap while reading (document_too_large, `limit` names it)' },
        415: { description: 'Not a format the service converts (document_unsupported)' },
        422: { description: 'Broken, encrypted or too complex (document_unreadable, document_encrypted, document_too_complex)' },
        503: { description: 'Every document worker busy (documents_busy, Retry-After)' },
      },
      handler: (ctx, input) => handleUpload(deps, ctx, input),
    },
  ];
}
