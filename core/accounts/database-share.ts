/**
 * Each account's share of this API process's database connections. The driver keeps a pool of
 * connections per process (its `maxPoolSize`, 100 by default) and queues every operation beyond it,
 * first come first served: one account with a hundred slow reads in flight would make every other
 * account's look-up wait behind all of them. A request of a database-backed surface (Batch, Crawl,
 * usage, prepared domains) therefore takes one of its account's turns first, `share` of the pool
 * (ACCOUNT_DATABASE_SHARE_PERCENT, at least one): at most that many of an account's requests use the
 * database at once in the process, as many more wait in the account's own line (first come first
 * served), and beyond that the request is refused with 429 `rate_limited` (limit `database_share`)
 * before any database work. Other accounts never wait in that line, so a pool of 100 and a share of
 * 25% leave three quarters of the connections to them whatever one account sends.
 *
 * Fetch requests are not counted here: their database work (the charge) rides group-committed ledger
 * writes, and their number is held by the plan's concurrency slots.
 */
import { Semaphore, type Release } from '../../base/semaphore';

export type ShareTurn = { ok: true; release: Release } | { ok: false };

/** Accounts kept at most; beyond, idle ones are forgotten (an idle account's line is empty). */
const MAX_ACCOUNTS = 50_000;

export class DatabaseShare {
  private readonly lines = new Map<string, Semaphore>();
  /** Requests refused past their account's line (for /metrics). */
  refused = 0;

  constructor(
    /** Requests of one account using the database at once in this process. */
    readonly perAccount: number,
  ) {}

  /** Sized from the driver's pool: `percent` of `poolSize`, at least one. */
  static of(poolSize: number, percent: number): DatabaseShare {
    return new DatabaseShare(Math.max(1, Math.floor((poolSize * percent) / 100)));
  }

  /** One of the account's turns, once its earlier requests leave one; refused when its line is full. */
  async take(accountId: string, signal?: AbortSignal): Promise<ShareTurn> {
    let line = this.lines.get(accountId);
    if (!line) {
      if (this.lines.size >= MAX_ACCOUNTS) this.forget();
      line = new Semaphore(this.perAccount);
      this.lines.set(accountId, line);
    }
    if (line.inUse >= this.perAccount && line.waiting >= this.perAccount) {
      this.refused++;
      return { ok: false };
    }
    const turn = await line.take(signal ? { signal } : {});
    if (!turn.ok) return { ok: false };
    const held = line;
    return {
      ok: true,
      release: () => {
        turn.release();
        if (held.idle && this.lines.get(accountId) === held) this.lines.delete(accountId);
      },
    };
  }

  private forget(): void {
    for (const [account, line] of this.lines) if (line.idle) this.lines.delete(account);
  }
}
