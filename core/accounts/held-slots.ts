/**
 * Numbered slots taken by unique insert: the one mechanism behind every "at most N at once" that must
 * hold across API processes and workers (active jobs, core/jobs/active-jobs.ts; what an account holds,
 * limit-gate.ts). A pool of `limit` slots is numbered 0..limit-1; a holder takes a free one by inserting
 * its record under a unique key, so of two processes reaching for the last slot exactly one insert
 * lands (FerretDB has no atomic counters and no transactions; an insert under a unique key is exact on
 * both engines). The holder's end deletes the record. A record whose holder went without deleting it (a
 * crash, an expiry, an end that frees nothing) is reclaimed when the pool is full: the pool's owner
 * says which holders are gone.
 *
 * A free slot is picked at random among those seen free, so concurrent takers in several processes
 * rarely reach for the same one; a taker that loses reads the pool again.
 */

/** One taken slot: its number and holder, and when it was taken (epoch ms). */
export interface Holding {
  n: number;
  holder: string;
  at: number;
}

/** Where a pool's slots are recorded. */
export interface SlotRecords {
  /** The pool's holdings (those numbered `limit` or more may be left out). */
  read(limit: number): Promise<Holding[]>;
  /** Records slot `n` for `holder`: false when the slot (or the holder's record) exists already. */
  insert(n: number, holder: string): Promise<boolean>;
  /** Deletes slot `n` if `holder` still holds it. */
  remove(n: number, holder: string): Promise<void>;
}

/** The holders among `holdings` that are gone and whose slots may be taken back. */
export type GoneHolders = (holdings: Holding[]) => Promise<Set<string>>;

export type SlotTaken = { ok: true; n: number } | { ok: false; inUse: number };

/** Reads and inserts at most this many times: each lost insert means another taker's landed. */
const MAX_ROUNDS = 64;

/** Takes one of the pool's `limit` slots for `holder` (taking it twice is harmless), or says all are held. */
export async function takeSlot(records: SlotRecords, limit: number, holder: string, gone?: GoneHolders): Promise<SlotTaken> {
  let inUse = limit;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const held = await records.read(limit);
    const own = held.find((holding) => holding.holder === holder);
    if (own) return { ok: true, n: own.n };
    inUse = held.length;
    const taken = new Set(held.map((holding) => holding.n));
    const free: number[] = [];
    for (let n = 0; n < limit; n++) if (!taken.has(n)) free.push(n);
    if (free.length === 0) {
      const dead = gone ? await gone(held) : new Set<string>();
      if (dead.size === 0) return { ok: false, inUse };
      for (const holding of held) if (dead.has(holding.holder)) await records.remove(holding.n, holding.holder);
      continue;
    }
    const n = free[Math.floor(Math.random() * free.length)] as number;
    if (await records.insert(n, holder)) return { ok: true, n };
  }
  return { ok: false, inUse };
}
