/**
 * What the host gate keeps where every API and worker process sees it. The gate decides; the store only
 * records, in operations that stay correct without transactions or atomic updates (the domain's
 * implementation on the database: core/politeness/store.ts):
 *
 * - start slots: one record per request start of a rate-limited host, insert-only, so exactly one
 *   request takes each slot whichever process asks;
 * - leases: one record per request in flight at a governed host, at most its concurrency of them,
 *   renewed while held and expiring when their process dies;
 * - a host's back-off and its robots.txt Crawl-delay, each replaced whole.
 */
export interface HostState {
  /** 429/503 answers in a row (the pause doubles with each) and until when the host is paused. */
  backoff?: { until: number; level: number };
  /** robots.txt Crawl-delay in milliseconds, valid until `until`. */
  delay?: { until: number; ms: number };
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
}
