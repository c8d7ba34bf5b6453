import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { ManualClock } from '../../core/accounts';
import { ChainStore, type ChainDocument, type ChainSpec, type Retention } from '../../core/accounts/chain';
import { eventually } from '../helpers/stack';
import { openAccounts, type AccountsHandle } from '../helpers/app';

interface Counter {
  n: number;
}

/** Adds each operation to the count; each result is the count after it. */
const counter: ChainSpec<Counter, number, number> = {
  initial: () => ({ n: 0 }),
  apply(state, ops) {
    let n = state.n;
    const results = ops.map((op) => (n += op));
    return { state: { n }, results, changed: true, log: ops };
  },
};

const retention: Retention = { every: 10, keep: 5, ageMs: 60_000 };
const MINUTE = 60_000;

describe('chain retention', () => {
  let handle: AccountsHandle;
  let collection: Collection<ChainDocument<Counter>>;
  let clock: ManualClock;
  const chain = 'acct_retention/2026-11';

  before(async () => {
    handle = await openAccounts();
  });
  after(async () => {
    await handle.close();
  });
  beforeEach(() => {
    collection = handle.db.db.collection(`chain_retention_${randomBytes(4).toString('hex')}`);
    clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  });
  afterEach(async () => {
    await collection.drop();
  });

  const seqs = async (name = chain): Promise<number[]> =>
    (await collection.find({ chain: name }).toArray()).map((doc) => doc.seq).sort((a, b) => a - b);
  const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);
  const write = async (store: ChainStore<Counter, number, number>, count: number): Promise<void> => {
    for (let index = 0; index < count; index++) await store.submit(chain, 1);
  };

  it('prunes entries older than the age and behind the newest ones, and readers start at the floor', async () => {
    const writer = new ChainStore(collection, counter, clock, retention);
    await write(writer, 10);
    clock.advance(2 * MINUTE);
    await write(writer, 20);
    await eventually(async () => writer.pruning.deleted === 9, 50, 50);
    // Entry 10 is the newest one old enough: the floor, kept; 1–9 are gone, the rest is whole.
    expect(await seqs()).to.deep.equal(range(10, 30));
    const floors = await collection.find({ chain: `${chain}~floor` }).sort({ seq: -1 }).toArray();
    expect(floors[0]?.state).to.deep.equal({ seq: 10 });

    // A process that never saw the chain starts at the floor and finds the head, and two writers
    // (one with a cached head, one without) extend it without a fork.
    const cold = new ChainStore(collection, counter, clock, retention);
    expect(await cold.read(chain)).to.include({ seq: 30 });
    expect((await cold.read(chain)).state).to.deep.equal({ n: 30 });
    expect(await cold.submit(chain, 1)).to.equal(31);
    expect(await writer.submit(chain, 1)).to.equal(32);
    expect(await seqs()).to.deep.equal(range(10, 32));
    expect(writer.pruning.failed).to.equal(0);
  });

  it('keeps young entries however many there are', async () => {
    const writer = new ChainStore(collection, counter, clock, retention);
    await write(writer, 40);
    clock.advance(30_000);
    await write(writer, 10);
    // A prune is tried after every 10th entry: wait until all five ran to their end, then none may have removed anything.
    await eventually(async () => writer.pruning.finished === 5, 50, 100);
    expect(writer.pruning).to.deep.equal({ deleted: 0, failed: 0, finished: 5 });
    expect(await seqs()).to.deep.equal(range(1, 50));
  });

  it('takes back an insert that landed below the floor after a stall, and redoes it on the real head', async () => {
    let stall: (() => Promise<void>) | undefined;
    // The same collection, but the first insert waits for `stall`: the writer is frozen between
    // reading its head and inserting after it, while another process extends and prunes the chain.
    const stalling = new Proxy(collection, {
      get(target, property) {
        if (property === 'insertOne') {
          return async (...args: Parameters<Collection<ChainDocument<Counter>>['insertOne']>) => {
            const pending = stall;
            stall = undefined;
            if (pending) await pending();
            return target.insertOne(...args);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const frozen = new ChainStore(stalling, counter, clock, retention);
    const other = new ChainStore(collection, counter, clock, retention);
    await write(frozen, 3);
    stall = async () => {
      clock.advance(10 * MINUTE);
      await write(other, 17);
      clock.advance(10 * MINUTE);
      await write(other, 10);
      // Entries 1–19 go (entry 20 is the newest one older than a minute): the frozen writer's next
      // entry, 4, among them.
      // The prunes run behind the writes; on a loaded machine they may take seconds.
      await eventually(async () => other.pruning.deleted === 19, 100, 100).catch((error: unknown) => {
        throw new Error(`${String(error)}: pruning ${JSON.stringify(other.pruning)}`);
      });
    };

    expect(await frozen.submit(chain, 100)).to.equal(130);
    expect(await seqs()).to.deep.equal(range(20, 31));
    const head = await new ChainStore(collection, counter, clock, retention).read(chain);
    expect(head).to.include({ seq: 31 });
    expect(head.state).to.deep.equal({ n: 130 });
  });

  it('keeps everything without retention', async () => {
    const writer = new ChainStore(collection, counter, clock, false);
    await write(writer, 10);
    clock.advance(10 * MINUTE);
    await write(writer, 20);
    // Without retention no prune starts at all, so there is nothing to wait for.
    expect(writer.pruning).to.deep.equal({ deleted: 0, failed: 0, finished: 0 });
    expect(await seqs()).to.deep.equal(range(1, 30));
    expect(await collection.countDocuments({ chain: `${chain}~floor` })).to.equal(0);
  });
});

describe('chain writers in several processes', () => {
  let handle: AccountsHandle;
  let collection: Collection<ChainDocument<Counter>>;
  const chain = 'acct_writers/2026-11';
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));

  before(async () => {
    handle = await openAccounts();
    collection = handle.db.db.collection(`chain_writers_${randomBytes(4).toString('hex')}`);
  });
  after(async () => {
    await collection.drop();
    await handle.close();
  });

  /** The collection as one process sees it, counting the look-ups it makes. */
  function counted(): { collection: Collection<ChainDocument<Counter>>; reads: () => number } {
    let reads = 0;
    const proxy = new Proxy(collection, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        if (property !== 'find' && property !== 'findOne') return bound;
        return (...args: unknown[]) => {
          reads++;
          return bound(...args);
        };
      },
    });
    return { collection: proxy, reads: () => reads };
  }

  it('finds the head in one look-up after losing an insert to another writer, however far it moved', async () => {
    const a = counted();
    const writerA = new ChainStore(a.collection, counter, clock, false);
    const writerB = new ChainStore(collection, counter, clock, false);
    expect(await writerA.submit(chain, 1)).to.equal(1);
    for (let n = 0; n < 5; n++) await writerB.submit(chain, 1);
    const before = a.reads();
    // A builds on its cached head (entry 1), loses to B's entry 2, reads entries 2 to 9 at once, and writes entry 7.
    expect(await writerA.submit(chain, 10)).to.equal(16);
    expect(writerA.conflicts).to.equal(1);
    expect(a.reads() - before, 'look-ups after the lost insert').to.equal(1);
    expect((await collection.find({ chain }).sort({ seq: 1 }).toArray()).map((doc) => doc.seq)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
  });

  it('lets two writers extend one chain at once, every operation applied once', async () => {
    const other = `${chain}-both`;
    const writers = [new ChainStore(collection, counter, clock, false), new ChainStore(collection, counter, clock, false)];
    const results = await Promise.all(
      writers.map(async (writer) => {
        const mine: number[] = [];
        // Each keeps a few operations waiting, as a busy process does.
        await Promise.all(Array.from({ length: 4 }, async () => {
          for (let n = 0; n < 15; n++) mine.push(await writer.submit(other, 1));
        }));
        return mine;
      }),
    );
    // Every result is a distinct count: no operation was applied twice or lost.
    expect(new Set(results.flat()).size).to.equal(120);
    expect(Math.max(...results.flat())).to.equal(120);
    const docs = await collection.find({ chain: other }).sort({ seq: 1 }).toArray();
    expect(docs.map((doc) => doc.seq)).to.deep.equal(docs.map((_, index) => index + 1));
    expect(docs.at(-1)?.state).to.deep.equal({ n: 120 });
  });
});
