import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { createRungMemory } from '../../engine/escalation';
import { MongoDomainRungStore } from '../../core/fetch/rung-store';
import { testStack } from '../helpers/stack';

describe('per-domain rung memory in MongoDB', () => {
  it('stores rungs in MongoDB (domain_rungs) with expiry on read and a purge', async function () {
    let url: string;
    try {
      url = testStack().urls.mongodb;
    } catch {
      this.skip();
    }
    const client = new MongoClient(url);
    try {
      const db = client.db(`fetchplane_escalation_${process.pid}`);
      const store = new MongoDomainRungStore(db);
      let now = Date.UTC(2030, 0, 1);
      const memory = createRungMemory(store, { ttlMs: 60_000, now: () => now });
      await memory.remember('https://shop.example.org/p/1', 'premium_proxy');
      await memory.remember('https://other.example.net/', 'plain');
      expect(await memory.recall('https://www.example.org/')).to.deep.equal({ rung: 'premium_proxy', stale: false });
      const doc = await db.collection('domain_rungs').findOne({ _id: 'example.org' as never });
      expect(doc).to.include({ rung: 'premium_proxy' });
      await memory.remember('https://example.org/', 'js_render_premium_proxy');
      expect((await memory.recall('https://example.org/'))?.rung).to.equal('js_render_premium_proxy');
      now += 61_000;
      expect(await memory.recall('https://example.org/')).to.equal(undefined);
      expect(await store.purgeExpired(new Date(now))).to.equal(1);
      expect(await db.collection('domain_rungs').countDocuments()).to.equal(0);
      await db.dropDatabase();
    } finally {
      await client.close();
    }
  });
});
