/**
 * What the host gate keeps where every API and worker process sees it. The gate decides; the store only
 * records, in operations that stay correct without transactions or atomic updates (the domain's
 * implementation on the database: core/politeness/store.ts):
 *
 * - start slots: one record per request start of a rate-limited host, insert-only, so exactly one
 *   request takes each slot whichever process asks;
 * - leases: one record per request in flight at a governed host, at most its concurrency of them,
 *   renewed while held and expiring when their process dies;
 * - a host's back-off and its robots.txt Crawl-delay, each replaced whole;
 * - turns: the requests waiting for one of a governed host's leases (their account, since when; each
 *   renewed while it waits and expiring when its process dies) and when each account last got one, so
 *   every process gives the next free lease to the same account.
 */
export interface HostState {
  /** 429/503 answers in a row (the pause doubles with each) and until when the host is paused. */
  backoff?: { until: number; level: number };
  /** robots.txt Crawl-delay in milliseconds, valid until `until`. */
  delay?: { until: number; ms: number };
}

/** A request waiting for one of a host's leases, in whichever process. */
export interface HostWaiter {
  account: string;
  /** When it began to wait (epoch ms). */
  since: number;
}

export interface HostTurns {
  /** The requests waiting now (expired ones left out). */
  waiting: HostWaiter[];
  /** When each account last got one of the host's leases (recent ones only). */
  served: ReadonlyMap<string, number>;
}

export interface HostGateStore {
  readState(host: string): Promise<HostState>;
  /** Records a pause that started with `status`. */
  writeBackoff(host: string, backoff: { until: number; level: number; status: number }, now: number): Promise<void>;
  /** A good answer after a pause: the back-off steps down to `level` (0 clears it). */
  stepBackoff(host: string, level: number, now: number): Promise<void>;
  writeDelay(host: string, delay: { ms: number; until: number }, now: number): Promise<void>;
  /** Takes the start slot `id`, its request starting `at`; false when another request holds it. */
  takeSlot(id: string, at: number, expiresAt: number): Promise<boolean>;
  /** When the request of slot `id` starts, if the slot is taken. */
  slotStart(id: string): Promise<number | undefined>;
  /** The highest slot id taken under `prefix`, if any. */
  lastSlot(prefix: string): Promise<string | undefined>;
  /** Deletes slots past their expiry (any process may; twice is harmless). */
  sweepSlots(now: number): Promise<void>;
  /** Takes the lease `id` for `token`; false when it is held. */
  takeLease(id: string, token: string, expiresAt: number): Promise<boolean>;
  renewLease(id: string, token: string, expiresAt: number): Promise<void>;
  releaseLease(id: string, token: string): Promise<void>;
  /** Deletes those of `ids` that expired before `now` (their holder died). */
  expireLeases(ids: readonly string[], now: number): Promise<void>;
  /** Records, or renews, that request `token` of `account` waits for a lease of `host` since `since`. */
  announceWaiter(host: string, token: string, waiter: HostWaiter, expiresAt: number): Promise<void>;
  withdrawWaiter(host: string, token: string): Promise<void>;
  /** The host's waiting requests and when each account last got a lease, as of `now`. */
  turns(host: string, now: number): Promise<HostTurns>;
  /** `account` got one of the host's leases `at`. */
  markServed(host: string, account: string, at: number, expiresAt: number): Promise<void>;
  /** Deletes expired waiters and turns (any process may; twice is harmless). */
  sweepTurns(now: number): Promise<void>;
}
