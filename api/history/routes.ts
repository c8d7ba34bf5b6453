/**
 * `/v1/history` (our extension): an account's versions of a URL kept by change tracking, and their
 * deletion. Keys as on the Extract endpoints (`apikey` query or `X-API-Key`); bad input is `REQS004`
 * naming the parameter, as on Fetch. A URL this account never tracked, like another account's, is 404
 * `version_not_found`.
 */
import { fetchIssues } from '../../core/fetch/params';
import { CHANGE_QUERY_PROPERTIES } from '../../core/changes/params';
import { API_KEY_QUERY_PROPERTY, authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { ObjectSchema, ResponseSpec, Route } from '../http/routes';

const URL_PROPERTY = { type: 'string', format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]', description: 'The page, as it was fetched with track_changes (the same URL key: scheme, www., a trailing slash and tracking parameters do not count).' };
const TAG_PROPERTY = { ...CHANGE_QUERY_PROPERTIES.change_tracking_tag, description: 'The history kept under this tag (track_changes with change_tracking_tag); untagged when absent.' };

const LIST_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    apikey: API_KEY_QUERY_PROPERTY,
    url: URL_PROPERTY,
    change_tracking_tag: TAG_PROPERTY,
    cursor: { type: 'string', minLength: 1, maxLength: 400, description: 'The previous page’s `next_cursor`.' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Versions per page, 1 to 100 (default 20).' },
  },
};

const DELETE_QUERY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apikey: API_KEY_QUERY_PROPERTY,
    url: { ...URL_PROPERTY, description: 'The page whose history goes (with change_tracking_tag: that tag’s). Absent: every history of the account.' },
    change_tracking_tag: TAG_PROPERTY,
  },
};

const VERSION = {
  type: 'object',
  required: ['version_id', 'fetched_at', 'status', 'content_hash', 'size', 'final_url', 'http_status'],
  properties: {
    version_id: { type: 'string', description: 'Pass it as as_of on Fetch to read this version.' },
    fetched_at: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: ['new', 'changed'], description: 'What the version was against the one before it (a fetch found the same stores nothing).' },
    content_hash: { type: 'string', description: '`sha256:` and the hex digest of the bytes as fetched.' },
    size: { type: 'integer', description: 'Bytes as fetched.' },
    stored_size: { type: 'integer', description: 'Bytes as stored (compressed; identical bytes of a URL are stored once).' },
    content_type: { type: 'string' },
    final_url: { type: 'string' },
    http_status: { type: 'integer' },
    replaced_at: { type: 'string', format: 'date-time', description: 'When a newer version replaced it; absent on the newest.' },
    last_seen_at: { type: 'string', format: 'date-time', description: 'The newest only: the last fetch that found the page so (to the minute).' },
    diff: {
      type: 'object',
      description: 'Against the version before: lines added and removed, fields changed, and what differed but did not count.',
      properties: { added: { type: 'integer' }, removed: { type: 'integer' }, fields: { type: 'integer' }, ignored: { type: 'array', items: { type: 'object', properties: { kind: { type: 'string' }, count: { type: 'integer' } } } } },
    },
  },
};

const json = (description: string, schema: Record<string, unknown>): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

const errors = {
  400: { description: 'REQS004: a parameter is invalid; the detail names it' },
  401: { description: 'API key missing, malformed or unknown (AUTH001, AUTH002, AUTH003)' },
};

export function historyRoutes(deps: ApiDeps): Route[] {
  const { listing } = deps.services.changes;
  const common = { tags: ['Change tracking'], security: securityOf('extract'), before: [authenticate(deps, 'extract')], issues: fetchIssues };
  return [
    {
      ...common,
      method: 'GET',
      path: '/v1/history',
      operationId: 'listVersions',
      summary: 'The account’s versions of a URL, newest first (our extension).',
      description: 'Versions kept by Fetch, crawls and Batch tasks with track_changes, within the plan’s history_versions and history_days. Costs nothing.',
      query: LIST_QUERY,
      responses: {
        200: json('A page of versions', {
          type: 'object',
          required: ['url', 'versions', 'next_cursor'],
          properties: {
            url: { type: 'string' },
            change_tracking_tag: { type: 'string' },
            tracked_since: { type: 'string', format: 'date-time' },
            versions: { type: 'array', items: VERSION },
            next_cursor: { type: ['string', 'null'], description: 'null on the last page.' },
          },
        }),
        ...errors,
        404: { description: 'version_not_found: the account keeps no version of this URL' },
      },
      async handler(ctx, input) {
        const query = input.query as { url: string; change_tracking_tag?: string; cursor?: string; limit?: number };
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await listing.list(principalOf(ctx), {
          url: query.url,
          ...(query.change_tracking_tag !== undefined ? { tag: query.change_tracking_tag } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          limit: query.limit ?? 20,
        });
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/history',
      operationId: 'deleteHistory',
      summary: 'Delete the account’s history of a URL, or all of it (our extension).',
      description: 'With url: that URL’s history (untagged, or the change_tracking_tag one). Without: every history of the account, and the baselines of its tracked crawls. Nothing reads as kept from then on; the stored pages go at once (the rest of a very large history with the next retention sweep).',
      query: DELETE_QUERY,
      responses: { 200: json('How many URLs’ histories were deleted', { type: 'object', required: ['deleted_urls'], properties: { deleted_urls: { type: 'integer' } } }), ...errors },
      async handler(ctx, input) {
        const query = input.query as { url?: string; change_tracking_tag?: string };
        ctx.body = await listing.remove(principalOf(ctx), { ...(query.url !== undefined ? { url: query.url } : {}), ...(query.change_tracking_tag !== undefined ? { tag: query.change_tracking_tag } : {}) });
      },
    },
  ];
}
