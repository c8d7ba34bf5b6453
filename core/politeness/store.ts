/**
 * Where the installation-wide host gate keeps what every API and worker process must see, written so
 * that FerretDB's lack of transactions and of atomic updates does no harm:
 *
 * - `host_slots`: one document per request start of a rate-limited host, keyed by host, interval and
 *   slot number. Insert-only: the unique `_id` lets exactly one request take a slot, whichever process
 *   it runs in. Old slots are deleted by their `expires_at`.
 * - `host_leases`: one document per request in flight at a governed host, `_id` host and lease number
 *   (at most the host's concurrency of them), deleted by its holder (by `_id` and token) or once it
 *   expires; the holder renews it while it lasts.
 * - `host_state`: a host's back-off (`b|host`: until when, how many times in a row) and its robots.txt
 *   `Crawl-delay` (`d|host`). Each replaced whole; two writers racing leave one of two equally valid
 *   pauses, never none.
 */
import type { Collection, Db } from 'mongodb';
import type { IndexRegistration } from '../db';

export interface SlotDoc {
  _id: string;
  expires_at: Date;
}

export interface LeaseDoc {
  _id: string;
  token: string;
  expires_at: Date;
}

export interface HostStateDoc {
  _id: string;
  host: string;
  kind: 'backoff' | 'delay';
  until: Date;
  /** Back-off: 429/503 answers in a row (the pause doubles with each). */
  level?: number;
  /** Crawl delay, milliseconds. */
  ms?: number;
  /** Back-off: the status that started it. */
  status?: number;
  updated_at: Date;
}

export const POLITENESS_INDEXES: IndexRegistration = {
  host_slots: [{ key: { expires_at: 1 }, name: 'expires_at' }],
  host_leases: [{ key: { expires_at: 1 }, name: 'expires_at' }],
  host_state: [{ key: { kind: 1, until: 1 }, name: 'kind_until' }],
};

export interface PolitenessCollections {
  slots: Collection<SlotDoc>;
  leases: Collection<LeaseDoc>;
  state: Collection<HostStateDoc>;
}

export function politenessCollections(db: Db): PolitenessCollections {
  return {
    slots: db.collection<SlotDoc>('host_slots'),
    leases: db.collection<LeaseDoc>('host_leases'),
    state: db.collection<HostStateDoc>('host_state'),
  };
}

export const stateIds = {
  backoff: (host: string): string => `b|${host}`,
  delay: (host: string): string => `d|${host}`,
};
