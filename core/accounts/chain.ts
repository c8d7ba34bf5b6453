/**
 * An append-only chain of state documents, exact on MongoDB and on FerretDB without transactions or
 * atomic updates. Entry `n + 1` of a chain carries the whole state after applying a batch of
 * operations to entry `n`, and is inserted under `_id = "<chain>#<n + 1>"`. The `_id` index is unique
 * on both engines and an insert is atomic, so of two writers that read entry `n` only one can insert
 * `n + 1`; the other gets a duplicate-key error, reads the newer head and applies its operations again.
 * Nothing is ever updated or deleted, which is what makes FerretDB's read-modify-write updates harmless.
 *
 * Inside one process, operations on a chain are queued and committed in batches by one writer (group
 * commit), so concurrent callers in the same process never race each other; across processes the
 * unique `_id` decides. The head of each chain is cached; a stale cache costs one failed insert.
 * Every read is an `_id` point look-up (the only filter FerretDB 1.24 pushes down to SQLite): the head
 * is found by probing `n + 1, n + 2, n + 4, …` then bisecting, which works because entries are
 * contiguous (an entry is only ever inserted right after the one it was computed from).
 *
 * Retention. A chain's old entries are pruned from below, behind a floor: the floor of chain `c` is
 * itself a small chain (`c~floor`, never pruned) whose head says from which entry `c` starts. A
 * reader without a cached head starts at the floor instead of entry 1, because a gap below the floor
 * would otherwise read as the end of the chain and let a writer insert a fork. After every
 * `retention.every`-th entry, its writer raises the floor to the newest entry that is older than
 * `retention.ageMs` and at least `retention.keep` entries behind the head, then deletes what lies
 * below. A writer building on a head it learned long ago could still find its next entry deleted and
 * insert it again below the floor: so heads older than half of `ageMs` are not trusted from the cache,
 * and an insert built on such a head is checked against the floor afterwards and taken back (then
 * redone on the real head) if it landed below it. Entry times come from each writer's clock, so the
 * clocks of the processes must agree to within a fraction of `ageMs` (a day by default).
 */
import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { isDuplicateKey, UnknownOutcome } from '../../base/db';
import type { Clock } from '../../base/clock';

export interface ChainDocument<S> {
  _id: string;
  chain: string;
  seq: number;
  at: Date;
  /** Token of the insert attempt, to tell whether an insert with an ambiguous outcome landed. */
  w: string;
  state: S;
  /** What the batch did, for audit; not read back. */
  log: unknown[];
}

export interface Applied<S, R> {
  state: S;
  results: R[];
  /** False when no operation changed the state (for example every one was refused): nothing is written. */
  changed: boolean;
  log: unknown[];
}

export interface ChainSpec<S, Op, R> {
  initial(): S;
  /** Pure: the state after `ops` (in order) at time `now`, and one result per operation. */
  apply(state: S, ops: Op[], now: number): Applied<S, R>;
}

interface Head<S> {
  seq: number;
  state: S;
  /** When this entry was known to be the newest (clock ms): the entry after it was written later. */
  seenAt: number;
}

/** How much of a chain is kept; `false` keeps everything (the floors themselves). */
export interface Retention {
  /** A prune is tried after every `every`-th entry of a chain. */
  every: number;
  /** The newest `keep` entries are never pruned. */
  keep: number;
  /** Entries younger than this are never pruned. */
  ageMs: number;
}

export const DEFAULT_RETENTION: Retention = { every: 1000, keep: 1000, ageMs: 24 * 60 * 60 * 1000 };

/** LEDGER_RETENTION_HOURS as a retention: 0 keeps every entry. */
export const retentionOf = (hours: number): Retention | false =>
  hours === 0 ? false : { ...DEFAULT_RETENTION, ageMs: hours * 60 * 60 * 1000 };

interface FloorState {
  /** The oldest entry kept; 0 while nothing was pruned. */
  seq: number;
}

/** Raises the floor to `raise` (never lowers it); each result is the floor before. */
const floorSpec: ChainSpec<FloorState, number, number> = {
  initial: () => ({ seq: 0 }),
  apply(state, raises) {
    let seq = state.seq;
    const results = raises.map((raise) => {
      const before = seq;
      seq = Math.max(seq, raise);
      return before;
    });
    return { state: { seq }, results, changed: seq !== state.seq, log: [{ op: 'floor', seq }] };
  },
};

const floorChainOf = (chain: string): string => `${chain}~floor`;
const DELETE_BATCH = 500;

interface Pending<Op, R> {
  op: Op;
  resolve(result: R): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 256;
const MAX_ATTEMPTS = 200;
const MAX_CACHED_HEADS = 50_000;
/** Entries after a known one that `discover` reads in one look-up before searching further. */
const DISCOVER_WINDOW = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Insert tokens only need to differ from every other writer's and attempt's: 8 random bytes drawn once
 * per process, then a count (drawing random bytes on every insert took microseconds on each one).
 */
const PROCESS_TOKEN = randomBytes(8).toString('hex');
let tokens = 0;
const nextToken = (): string => `${PROCESS_TOKEN}${(++tokens).toString(36)}`;

export class ChainStore<S, Op, R> {
  /** Inserts that lost to another writer (a stale head); each one cost a re-read and a retry. */
  conflicts = 0;
  /**
   * Entries deleted by pruning, prunes that failed (they are tried again at the next `every`), and
   * prunes that ran to their end either way (prunes run behind the writes that start them).
   */
  readonly pruning = { deleted: 0, failed: 0, finished: 0 };
  private readonly heads = new Map<string, Head<S>>();
  private readonly queues = new Map<string, Array<Pending<Op, R>>>();
  private readonly floors: ChainStore<FloorState, number, number> | undefined;

  constructor(
    private readonly collection: Collection<ChainDocument<S>>,
    private readonly spec: ChainSpec<S, Op, R>,
    private readonly clock: Clock,
    private readonly retention: Retention | false = DEFAULT_RETENTION,
  ) {
    this.floors = retention
      ? new ChainStore(collection as unknown as Collection<ChainDocument<FloorState>>, floorSpec, clock, false)
      : undefined;
  }

  /** Applies `op` to the chain's newest state, once, and resolves when that is durable. */
  submit(chain: string, op: Op): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.queues.get(chain);
      if (queue) {
        queue.push({ op, resolve, reject });
        return;
      }
      this.queues.set(chain, [{ op, resolve, reject }]);
      void this.drain(chain);
    });
  }

  /** Whether the write of an UnknownOutcome landed; rejects while the database cannot tell. */
  async landed(outcome: Pick<UnknownOutcome, 'entry' | 'token'>): Promise<boolean> {
    const doc = await this.collection.findOne({ _id: outcome.entry }, { projection: { w: 1 } });
    return doc?.w === outcome.token;
  }

  /** The newest state of a chain, checked against the database (another process may have appended). */
  async read(chain: string): Promise<Head<S>> {
    const head = await this.discover(chain, this.heads.get(chain));
    this.remember(chain, head);
    return head;
  }

  private async drain(chain: string): Promise<void> {
    const queue = this.queues.get(chain) as Array<Pending<Op, R>>;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        const results = await this.commit(chain, batch.map((pending) => pending.op));
        batch.forEach((pending, index) => pending.resolve(results[index] as R));
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.queues.delete(chain);
  }

  private async commit(chain: string, ops: Op[]): Promise<R[]> {
    const cached = this.heads.get(chain);
    let head = cached && this.trusted(cached) ? cached : await this.discover(chain, undefined);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const applied = this.spec.apply(head.state, ops, this.clock.now());
      if (!applied.changed) {
        // A refusal must not rest on a stale head: make sure nobody appended after it.
        const newer = await this.discover(chain, head);
        if (newer.seq === head.seq) return applied.results;
        head = newer;
        continue;
      }
      const next: ChainDocument<S> = {
        _id: entryId(chain, head.seq + 1),
        chain,
        seq: head.seq + 1,
        at: new Date(this.clock.now()),
        w: nextToken(),
        state: applied.state,
        log: applied.log,
      };
      const insertedAt = this.clock.now();
      try {
        await this.collection.insertOne(next);
      } catch (error) {
        if (isDuplicateKey(error)) {
          this.conflicts++;
          head = await this.discover(chain, head);
          if (attempt > 3) await sleep(Math.random() * Math.min(50, attempt * 2));
          continue;
        }
        // The insert may have landed before the failure reached us: its token tells.
        const landed = await this.collection.findOne({ _id: next._id }).then(
          (doc) => doc?.w === next.w,
          () => undefined,
        );
        if (landed !== true) {
          this.heads.delete(chain);
          // Not even that could be read (the database is away): whether it landed is known later only.
          throw landed === undefined ? new UnknownOutcome(error, next._id, next.w) : error;
        }
      }
      if (!this.trusted(head) && (await this.belowFloor(chain, next))) {
        head = await this.discover(chain, undefined);
        continue;
      }
      this.remember(chain, { seq: next.seq, state: next.state, seenAt: insertedAt });
      if (this.retention && next.seq % this.retention.every === 0) {
        this.prune(chain, next.seq)
          .catch(() => {
            this.pruning.failed++;
          })
          .finally(() => {
            this.pruning.finished++;
          });
      }
      return applied.results;
    }
    this.heads.delete(chain);
    throw new Error(`chain ${chain}: gave up after ${MAX_ATTEMPTS} contended attempts`);
  }

  /** Whether a head learned at `seenAt` may be built on without looking at the floor first. */
  private trusted(head: Head<S>): boolean {
    return !this.retention || this.clock.now() - head.seenAt < this.retention.ageMs / 2;
  }

  /**
   * Finds the newest entry at or after `known` (an entry that exists, or was the head recently
   * enough that nothing after it can have been pruned) with look-ups by `_id` only; from the floor
   * without `known`.
   */
  private async discover(chain: string, known: Head<S> | undefined): Promise<Head<S>> {
    const seenAt = this.clock.now();
    let low = known && this.trusted(known) ? known : await this.lowest(chain);
    // The next entries in one look-up: after an insert lost to another writer, or before a refusal,
    // the head is almost always among them. (A writer that lost a race and then searched entry by entry,
    // three round trips, lost the next race too, for as long as the other kept writing.)
    const start = low.seq;
    const ids = Array.from({ length: DISCOVER_WINDOW }, (_, n) => entryId(chain, start + 1 + n));
    for (const doc of await this.collection.find({ _id: { $in: ids } }).toArray()) {
      if (doc.seq > low.seq) low = { seq: doc.seq, state: doc.state, seenAt: 0 };
    }
    // The entry after the newest one found is in the window and was not there: that one is the head.
    if (low.seq < start + DISCOVER_WINDOW) return { seq: low.seq, state: low.state, seenAt };
    let high = 0;
    for (let step = 1; ; step *= 2) {
      const found = await this.entry(chain, low.seq + step);
      if (!found) {
        high = low.seq + step;
        break;
      }
      low = found;
    }
    while (high - low.seq > 1) {
      const middle = Math.floor((low.seq + high) / 2);
      const found = await this.entry(chain, middle);
      if (found) low = found;
      else high = middle;
    }
    return { seq: low.seq, state: low.state, seenAt };
  }

  /** The chain's oldest kept entry: the floor's, or the initial state when nothing was pruned. */
  private async lowest(chain: string): Promise<Head<S>> {
    const initial = { seq: 0, state: this.spec.initial(), seenAt: this.clock.now() };
    if (!this.floors) return initial;
    for (let attempt = 0; attempt < 5; attempt++) {
      const floor = (await this.floors.read(floorChainOf(chain))).state.seq;
      if (floor === 0) return initial;
      const entry = await this.entry(chain, floor);
      if (entry) return entry;
      // The floor rose and its entry was pruned between the two reads: read the floor again.
    }
    throw new Error(`chain ${chain}: its floor keeps moving`);
  }

  /** Whether `inserted` landed below the floor (its place had been pruned); if so it is taken back. */
  private async belowFloor(chain: string, inserted: ChainDocument<S>): Promise<boolean> {
    if (!this.floors) return false;
    const floor = (await this.floors.read(floorChainOf(chain))).state.seq;
    if (inserted.seq >= floor) return false;
    await this.collection.deleteOne({ _id: inserted._id, w: inserted.w });
    return true;
  }

  /**
   * Raises the floor to the newest entry that is old enough and far enough behind `headSeq`, then
   * deletes the entries below it. The entries' times grow with their sequence, so a bisection finds it.
   */
  private async prune(chain: string, headSeq: number): Promise<void> {
    if (!this.retention || !this.floors) return;
    const floorChain = floorChainOf(chain);
    const floor = (await this.floors.read(floorChain)).state.seq;
    const cutoff = this.clock.now() - this.retention.ageMs;
    const oldEnough = async (seq: number): Promise<boolean> => {
      const doc = await this.collection.findOne({ _id: entryId(chain, seq) }, { projection: { at: 1 } });
      return doc !== null && doc.at.getTime() <= cutoff;
    };
    let low = Math.max(floor, 1);
    let high = headSeq - this.retention.keep;
    if (high <= low || !(await oldEnough(low))) return;
    if (await oldEnough(high)) low = high;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (await oldEnough(middle)) low = middle;
      else high = middle;
    }
    if (low <= floor) return;
    const before = await this.floors.submit(floorChain, low);
    for (let start = Math.max(before, 1); start < low; start += DELETE_BATCH) {
      const deletes = [];
      for (let seq = start; seq < Math.min(start + DELETE_BATCH, low); seq++) {
        deletes.push({ deleteOne: { filter: { _id: entryId(chain, seq) } } });
      }
      const result = await this.collection.bulkWrite(deletes, { ordered: false });
      this.pruning.deleted += result.deletedCount;
    }
  }

  private async entry(chain: string, seq: number): Promise<Head<S> | undefined> {
    const doc = await this.collection.findOne({ _id: entryId(chain, seq) });
    return doc ? { seq: doc.seq, state: doc.state, seenAt: 0 } : undefined;
  }

  private remember(chain: string, head: Head<S>): void {
    const cached = this.heads.get(chain);
    if (cached && cached.seq > head.seq) return;
    this.heads.delete(chain);
    if (this.heads.size >= MAX_CACHED_HEADS) {
      const oldest = this.heads.keys().next().value;
      if (oldest !== undefined) this.heads.delete(oldest);
    }
    this.heads.set(chain, head);
  }
}

export const entryId = (chain: string, seq: number): string => `${chain}#${seq}`;
