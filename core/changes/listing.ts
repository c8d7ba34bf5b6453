/**
 * `/v1/history` (our extension) as commands: an account's versions of a URL, newest first, a page at
 * a time with an opaque cursor (core/jobs/cursor.ts) that names the history it belongs to; and the
 * deletion of one history or all of them. Versions of another account, or none, are 404.
 */
import type { Principal } from '../accounts';
import { problem } from '../../base/errors';
import { cursorCodec, wholeNumber } from '../jobs/cursor';
import { historyLimits, type ChangeHistory, type VersionEntry } from './history';
import { resolveKey } from './keys';

const cursors = cursorCodec<number>('h1', {
  write: (seq) => [String(seq)],
  read: (parts) => (parts.length === 1 ? wholeNumber(parts[0], 10) : undefined),
});

export interface HistoryQuery {
  url: string;
  tag?: string;
  cursor?: string;
  limit: number;
}

const invalid = (parameter: string, detail: string) => problem('REQS004', detail, { members: { parameter } });

function presentVersion(entry: VersionEntry): Record<string, unknown> {
  const { doc } = entry;
  return {
    version_id: entry.id,
    fetched_at: doc.fetched_at.toISOString(),
    status: doc.status,
    content_hash: `sha256:${doc.content.hash}`,
    size: doc.content.size,
    stored_size: doc.content.stored,
    ...(doc.content.content_type ? { content_type: doc.content.content_type } : {}),
    final_url: doc.content.final_url,
    http_status: doc.content.status,
    ...(entry.replacedAt ? { replaced_at: entry.replacedAt.toISOString() } : {}),
    ...(entry.lastSeenAt ? { last_seen_at: entry.lastSeenAt.toISOString() } : {}),
    ...(doc.diff ? { diff: { added: doc.diff.added, removed: doc.diff.removed, fields: doc.diff.fields, ignored: doc.diff.ignored } } : {}),
  };
}

export function historyCommands(history: ChangeHistory) {
  return {
    /** A page of the account's versions of a URL (and tag), newest first. */
    async list(principal: Principal, query: HistoryQuery): Promise<Record<string, unknown>> {
      const key = { accountId: principal.accountId, url: query.url, ...(query.tag !== undefined ? { tag: query.tag } : {}) };
      const resolved = resolveKey(key);
      if (!resolved) throw invalid('url', 'Parameter "url" must be an http or https URL.');
      let from: number | undefined;
      if (query.cursor !== undefined) {
        const decoded = cursors.decode(resolved.hash, query.cursor);
        if (!decoded.ok) throw invalid('cursor', decoded.reason === 'other_resource' ? 'This cursor belongs to the history of another URL (or tag).' : 'Parameter "cursor" is not a cursor of this listing.');
        from = decoded.position;
      }
      const page = await history.list(key, historyLimits(principal), from, query.limit);
      if (!page || (page.entries.length === 0 && from === undefined)) {
        throw problem('version_not_found', 'This account keeps no version of this URL (fetch it with track_changes=true first).');
      }
      return {
        url: page.track.url,
        ...(page.track.tag !== '' ? { change_tracking_tag: page.track.tag } : {}),
        tracked_since: page.track.created_at.toISOString(),
        versions: page.entries.map(presentVersion),
        next_cursor: page.next !== undefined ? cursors.encode(resolved.hash, page.next) : null,
      };
    },

    /** Deletes the account's history of a URL (and tag), or all of it; answers how many URLs' histories went. */
    async remove(principal: Principal, scope: { url?: string; tag?: string }): Promise<{ deleted_urls: number }> {
      if (scope.url !== undefined && !resolveKey({ accountId: principal.accountId, url: scope.url })) throw invalid('url', 'Parameter "url" must be an http or https URL.');
      if (scope.tag !== undefined && scope.url === undefined) throw invalid('change_tracking_tag', 'Parameter "change_tracking_tag" names one URL’s history: send it with "url".');
      return { deleted_urls: await history.remove(principal.accountId, scope) };
    },
  };
}

export type HistoryCommands = ReturnType<typeof historyCommands>;
