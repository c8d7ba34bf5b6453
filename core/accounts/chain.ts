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
 * contiguous (an entry is only ever inserted right after the one it was computed from). For the same
 * reason entries must never be deleted from a chain that may still be written: a gap would read as
 * the end of the chain.
 */
import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import type { Clock } from './clock';

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
}

interface Pending<Op, R> {
  op: Op;
  resolve(result: R): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 256;
const MAX_ATTEMPTS = 200;
const MAX_CACHED_HEADS = 50_000;

const isDuplicateKey = (error: unknown): boolean => (error as { code?: unknown }).code === 11000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ChainStore<S, Op, R> {
  /** Inserts that lost to another writer (a stale head); each one cost a re-read and a retry. */
  conflicts = 0;
  private readonly heads = new Map<string, Head<S>>();
  private readonly queues = new Map<string, Array<Pending<Op, R>>>();

  constructor(
    private readonly collection: Collection<ChainDocument<S>>,
    private readonly spec: ChainSpec<S, Op, R>,
    private readonly clock: Clock,
  ) {}

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
    let head = this.heads.get(chain) ?? (await this.discover(chain, undefined));
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
        w: randomBytes(8).toString('hex'),
        state: applied.state,
        log: applied.log,
      };
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
        const landed = await this.collection.findOne({ _id: next._id }).catch(() => null);
        if (landed?.w !== next.w) {
          this.heads.delete(chain);
          throw error;
        }
      }
      this.remember(chain, { seq: next.seq, state: next.state });
      return applied.results;
    }
    this.heads.delete(chain);
    throw new Error(`chain ${chain}: gave up after ${MAX_ATTEMPTS} contended attempts`);
  }

  /** Finds the newest entry at or after `known` (which exists) with point look-ups only. */
  private async discover(chain: string, known: Head<S> | undefined): Promise<Head<S>> {
    let low: Head<S> = known ?? { seq: 0, state: this.spec.initial() };
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
    return low;
  }

  private async entry(chain: string, seq: number): Promise<Head<S> | undefined> {
    const doc = await this.collection.findOne({ _id: entryId(chain, seq) });
    return doc ? { seq: doc.seq, state: doc.state } : undefined;
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
