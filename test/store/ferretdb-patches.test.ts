import { expect } from 'chai';
import { Double, Long, MongoClient, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { testStack } from '../helpers/stack';

interface Row {
  // Every kind of _id MongoDB accepts, on purpose.
  _id: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  v: number;
  touched?: boolean;
}

/** A filter of any shape: the typed `Filter` cannot express `_id`s of several types at once. */
const by = (filter: Document): Filter<Row> => filter as Filter<Row>;

/** The plan and pushdown FerretDB reports for a find. */
async function plan(collection: Collection<Row>, filter: Document): Promise<{ plan: string; pushdown: boolean }> {
  const explained = (await collection.find(by(filter)).explain()) as { queryPlanner?: { Plan?: string[] }; filterPushdown?: boolean };
  return { plan: (explained.queryPlanner?.Plan ?? []).join(' '), pushdown: explained.filterPushdown === true };
}

describe('the local FerretDB build with our patches (scripts/ferretdb/patches)', () => {
  let client: MongoClient;
  let collection: Collection<Row>;
  const oid = new ObjectId('65a1b2c3d4e5f60718293a4b');
  const otherOid = new ObjectId('65a1b2c3d4e5f60718293a4c');
  const documents: Row[] = [
    { _id: 'alpha', v: 1 },
    { _id: 'beta', v: 2 },
    { _id: oid, v: 3 },
    { _id: otherOid, v: 4 },
    { _id: 1, v: 5 },
    { _id: new Double(2.5), v: 6 },
    { _id: Long.fromNumber(7), v: 7 },
    { _id: { a: 1, b: 'x' }, v: 8 },
    { _id: '1', v: 9 },
  ];

  before(async () => {
    client = new MongoClient(testStack().urls.mongodb);
    await client.connect();
    collection = client.db(`patches_${process.pid}`).collection<Row>('ids');
    await collection.insertMany(documents);
    // Enough rows that a scan and an index search are told apart by the plan, not by chance.
    await collection.insertMany(Array.from({ length: 500 }, (_, index) => ({ _id: `filler-${index}`, v: 100 + index })));
  });
  after(async () => {
    await client.db(`patches_${process.pid}`).dropDatabase();
    await client.close();
  });

  const values = async (filter: Document): Promise<number[]> =>
    (await collection.find(by(filter)).toArray()).map((doc) => doc.v).sort((a, b) => a - b);

  it('searches the _id index for an _id equality, alone or with other conditions (0001, 0002)', async () => {
    for (const filter of [{ _id: 'alpha' }, { _id: oid }, { _id: 'alpha', v: 1 }]) {
      const explained = await plan(collection, filter);
      expect(explained.pushdown, JSON.stringify(filter)).to.equal(true);
      expect(explained.plan, JSON.stringify(filter)).to.match(/SEARCH .* USING INDEX .*__id_/);
    }
  });

  it('searches the _id index for an _id $in of strings and ObjectIds (0002)', async () => {
    const explained = await plan(collection, { _id: { $in: ['alpha', oid, 'missing'] } });
    expect(explained.pushdown).to.equal(true);
    expect(explained.plan).to.match(/SEARCH .* USING INDEX .*__id_/);
  });

  it('leaves numbers, mixed lists and other operators to the full filter', async () => {
    for (const filter of [{ _id: 1 }, { _id: { $in: ['alpha', 1] } }, { _id: { $gt: 'a' } }, { _id: { a: 1, b: 'x' } }]) {
      expect((await plan(collection, filter)).pushdown, JSON.stringify(filter)).to.equal(false);
    }
  });

  it('finds exactly what MongoDB finds, for every kind of _id', async () => {
    expect(await values({ _id: 'alpha' })).to.deep.equal([1]);
    expect(await values({ _id: oid })).to.deep.equal([3]);
    expect(await values({ _id: 'alpha', v: 2 })).to.deep.equal([]);
    expect(await values({ _id: { $in: ['alpha', 'beta', oid, 'missing'] } })).to.deep.equal([1, 2, 3]);
    expect(await values({ _id: { $in: [otherOid] }, v: { $gte: 4 } })).to.deep.equal([4]);
    expect(await values({ _id: { $in: ['1'] } })).to.deep.equal([9]);
    // Numbers compare by value across types: none of these is pushed down, all still match.
    expect(await values({ _id: 1 })).to.deep.equal([5]);
    expect(await values({ _id: new Double(1) })).to.deep.equal([5]);
    expect(await values({ _id: Long.fromNumber(1) })).to.deep.equal([5]);
    expect(await values({ _id: 7 })).to.deep.equal([7]);
    expect(await values({ _id: 2.5 })).to.deep.equal([6]);
    expect(await values({ _id: { $in: [1, 'alpha', 7] } })).to.deep.equal([1, 5, 7]);
    expect(await values({ _id: { a: 1, b: 'x' } })).to.deep.equal([8]);
    expect(await values({ _id: { $in: [] } })).to.deep.equal([]);
  });

  it('updates and deletes by _id with the other conditions still applied', async () => {
    const unchanged = await collection.updateOne(by({ _id: 'beta', v: 99 }), { $set: { touched: true } });
    expect(unchanged.matchedCount).to.equal(0);
    const changed = await collection.updateOne(by({ _id: 'beta', v: 2 }), { $set: { touched: true } });
    expect(changed.modifiedCount).to.equal(1);
    expect((await collection.findOne(by({ _id: 'beta' })))?.touched).to.equal(true);
    const removed = await collection.deleteMany(by({ _id: { $in: ['filler-1', 'filler-2', oid, 'missing'] } }));
    expect(removed.deletedCount).to.equal(3);
    expect(await collection.countDocuments(by({ _id: { $in: ['filler-1', 'filler-2', oid] } }))).to.equal(0);
    expect(await collection.countDocuments({})).to.equal(documents.length + 500 - 3);
  });
});
