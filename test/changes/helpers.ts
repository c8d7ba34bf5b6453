/**
 * Change tracking through the running service: Fetch with `track_changes` and `as_of`, `/v1/history`,
 * and what the store holds, read back from the database.
 */
import { expect } from 'chai';
import { accountsHandle } from '../crawls/helpers';
import { fetchClient, type FetchClient } from '../fetch/helpers';
import type { TestAccount } from '../helpers/app';
import { testStack } from '../helpers/stack';

export interface ChangeTracking {
  status: 'new' | 'same' | 'changed';
  previous_fetched_at: string | null;
  version_id: string;
  diff: { text: string; fields: Record<string, { previous: unknown; current: unknown }>; ignored: Array<{ kind: string; count: number }>; added: number; removed: number } | null;
}

export interface HistoryClient extends FetchClient {
  /** A tracked fetch with `json_response`: the envelope's `change_tracking` and `html`. */
  tracked(url: string, params?: Record<string, string>): Promise<{ change: ChangeTracking; html: string; cost: string | null }>;
  history(query: Record<string, string>, method?: 'GET' | 'DELETE'): Promise<{ status: number; body: Record<string, any> }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function historyClient(account: TestAccount): HistoryClient {
  const api = testStack().urls.api;
  const client = fetchClient(api, account);
  return {
    ...client,
    async tracked(url, params = {}) {
      const response = await client.fetch({ url, track_changes: 'true', json_response: 'true', ...params });
      const text = await response.text();
      expect(response.status, text.slice(0, 500)).to.equal(200);
      const body = JSON.parse(text) as { change_tracking: ChangeTracking; html: string };
      expect(response.headers.get('x-change-status')).to.equal(body.change_tracking.status);
      return { change: body.change_tracking, html: body.html, cost: response.headers.get('x-request-cost') };
    },
    async history(query, method = 'GET') {
      const response = await fetch(`${api}/v1/history?${new URLSearchParams(query).toString()}`, { method, headers: { 'X-API-Key': account.key } });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    },
  };
}

/** Chunks the blob store holds for change tracking of an account. */
export async function changeBlobChunks(accountId: string): Promise<number> {
  const { db } = (await accountsHandle()).db;
  const tracks = await db.collection<{ _id: string; gen: string }>('change_tracks').find({ account: accountId }).toArray();
  return db.collection('blob_chunks').countDocuments({ kind: 'change_track', owner: { $in: tracks.map((track) => `${track._id}|${track.gen}`) } });
}

/** Versions stored for an account. */
export async function storedVersions(accountId: string): Promise<number> {
  const { db } = (await accountsHandle()).db;
  return db.collection('change_versions').countDocuments({ account: accountId });
}
