/**
 * One gate per account and counted limit, in front of "count what the account holds, then create one
 * more" (core/accounts/limits.ts):
 *
 * - Serialised in the process: an account's creations of one resource run one after the other, so
 *   requests in flight at once can no longer all pass the last free place. Across API processes
 *   (API_PROCESSES > 1) each process still counts on its own: an account can exceed a limit by at
 *   most the number of processes minus one.
 * - A refusal is remembered for LIMIT_REFUSAL_MEMORY_MS: the account's next attempts are refused from
 *   memory, without counting in the database again, until that time passes or this process sees the
 *   account free one (`freed`). A place freed by another process is seen when the memory ends.
 */
import type { AccountLimits } from '../../base/config';
import { ApiError } from '../../base/errors';
import type { Clock } from '../../base/clock';

/** The limits that count what an account holds (the schedule interval is a floor, the request budget a rate). */
export type CountedLimit = Exclude<keyof AccountLimits, 'scheduleIntervalSeconds' | 'requestsPerSecond' | 'requestBurst' | 'requestsInFlight' | 'renderPages' | 'deadlineRenders' | 'historyVersions' | 'historyDays' | 'monitorIntervalSeconds'>;

interface Remembered {
  error: ApiError;
  until: number;
}

/** Refusals remembered at most; beyond, the memory is emptied (it only saves database work). */
const MAX_REMEMBERED = 10_000;

export class LimitGate {
  /** The tail of each account's queue of creations of one resource. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly refused = new Map<string, Remembered>();

  constructor(
    private readonly clock: Clock,
    private readonly memoryMs: number,
  ) {}

  /**
   * Runs `create` (which counts and creates, throwing 429 `quota_exceeded` past the limit) after the
   * account's earlier creations of `limit` in this process; a remembered refusal answers at once.
   */
  async admit<T>(accountId: string, limit: CountedLimit, create: () => Promise<T>): Promise<T> {
    const key = `${accountId}|${limit}`;
    this.remembered(key);
    const previous = this.queues.get(key) ?? Promise.resolve();
    const run = previous.then(() => {
      // A refusal noted while this request waited answers it without another count.
      this.remembered(key);
      return create();
    });
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    try {
      return await run;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'quota_exceeded' && this.memoryMs > 0) {
        if (this.refused.size >= MAX_REMEMBERED) this.refused.clear();
        this.refused.set(key, { error, until: this.clock.now() + this.memoryMs });
      }
      throw error;
    }
  }

  /** The account gave back one of `limit`: its remembered refusal no longer holds. */
  freed(accountId: string, limit: CountedLimit): void {
    this.refused.delete(`${accountId}|${limit}`);
  }

  /** Throws the account's remembered refusal of `limit`, if any: for callers that would do work before `admit`. */
  refusedNow(accountId: string, limit: CountedLimit): void {
    this.remembered(`${accountId}|${limit}`);
  }

  private remembered(key: string): void {
    const remembered = this.refused.get(key);
    if (!remembered) return;
    if (remembered.until > this.clock.now()) throw remembered.error;
    this.refused.delete(key);
  }
}
