import { expect } from 'chai';
import { ManualClock } from '../../core/accounts';
import { applyClaims, type ClaimOp, type SlotGrant } from '../../core/accounts/slots';
import { eventually } from '../helpers/stack';
import { newAccount, openAccounts, type AccountsHandle } from '../helpers/app';

const op = (instance: string, want: number, limit = 3, renew = false): ClaimOp => ({ instance, want, limit, ttlMs: 1000, renew });

/** Entries written to the account's claim chain so far. */
const entries = (handle: AccountsHandle, accountId: string): Promise<number> =>
  handle.db.db.collection('slot_claims').countDocuments({ chain: accountId });

const release = (grants: SlotGrant[]) => Promise.all(grants.map((grant) => grant.ok && grant.lease.release()));

describe('concurrency slot claims', () => {
  describe('applyClaims', () => {
    it('grows a claim only up to what the other live claims leave', () => {
      const { state, results } = applyClaims({ claims: { b: { n: 2, e: 5000 } } }, [op('a', 2), op('a', 5)], 100);
      expect(results.map((result) => result.granted)).to.deep.equal([1, 1]);
      expect(results[0]).to.deep.equal({ granted: 1, others: 2, expires: 1100 });
      expect(state.claims).to.deep.equal({ a: { n: 1, e: 1100 }, b: { n: 2, e: 5000 } });
    });

    it('drops lapsed claims, always lets a claim shrink, and keeps one above a lowered limit', () => {
      const previous = { claims: { a: { n: 3, e: 5000 }, dead: { n: 2, e: 100 } } };
      const grown = applyClaims(previous, [op('b', 2, 3)], 100);
      expect(grown.state.claims).to.deep.equal({ a: { n: 3, e: 5000 } });
      expect(grown.results[0]?.granted).to.equal(0);
      expect(grown.changed).to.equal(false);
      const kept = applyClaims(previous, [op('a', 4, 2)], 100);
      expect(kept.results[0]?.granted).to.equal(3);
      const shrunk = applyClaims(previous, [op('a', 1, 2)], 100);
      expect(shrunk.state.claims.a).to.deep.equal({ n: 1, e: 1100 });
      const gone = applyClaims(previous, [op('a', 0)], 100);
      expect(gone.state.claims).to.deep.equal({});
    });

    it('writes a renewal only when asked and something is held', () => {
      const previous = { claims: { a: { n: 2, e: 500 } } };
      expect(applyClaims(previous, [op('a', 2)], 100).changed).to.equal(false);
      expect(applyClaims(previous, [op('a', 2, 3, true)], 100).state.claims.a).to.deep.equal({ n: 2, e: 1100 });
      expect(applyClaims(previous, [op('b', 0, 3, true)], 100).changed).to.equal(false);
    });
  });

  describe('on the database', () => {
    let handle: AccountsHandle;
    before(async () => {
      handle = await openAccounts();
    });
    after(() => handle.close());

    it('grows once for requests arriving together, then serves and frees slots without writing', async () => {
      const account = await newAccount(handle.accounts, { concurrency: 8 });
      const slots = handle.accounts.slots;
      const first = await Promise.all(Array.from({ length: 5 }, () => slots.acquire(account.accountId, 8)));
      expect(first.map((grant) => grant.ok)).to.deep.equal([true, true, true, true, true]);
      expect(first.map((grant) => grant.inUse)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(await entries(handle, account.accountId)).to.equal(1);
      await release(first);
      for (let round = 0; round < 50; round++) {
        const grants = await Promise.all(Array.from({ length: 5 }, () => slots.acquire(account.accountId, 8)));
        expect(grants.every((grant) => grant.ok)).to.equal(true);
        await release(grants);
      }
      expect(await entries(handle, account.accountId)).to.equal(1);
    });

    it('stops serving from a claim two thirds into its life without a renewal, and renews it', async () => {
      const clock = new ManualClock();
      const own = await openAccounts({ clock });
      try {
        const account = await newAccount(own.accounts, { concurrency: 2 });
        await release([await own.accounts.slots.acquire(account.accountId, 2)]);
        own.accounts.slots.abandon(); // no background renewal: the request must do it
        clock.advance((own.config.slotLeaseMs * 2) / 3 + 1);
        const grant = await own.accounts.slots.acquire(account.accountId, 2);
        expect(grant.ok).to.equal(true);
        expect(await entries(own, account.accountId)).to.equal(2);
        await release([grant]);
      } finally {
        await own.close();
      }
    });

    it('lets another process have the slots soon after the first one stops using them', async () => {
      const first = await openAccounts({ env: { SLOT_CLAIM_IDLE_MS: '200' } });
      const second = await openAccounts({ env: { SLOT_CLAIM_IDLE_MS: '200' } });
      try {
        const account = await newAccount(first.accounts, { concurrency: 2 });
        const held = await Promise.all([1, 2].map(() => first.accounts.slots.acquire(account.accountId, 2)));
        expect(held.every((grant) => grant.ok)).to.equal(true);
        expect(await second.accounts.slots.acquire(account.accountId, 2)).to.deep.include({ ok: false, inUse: 2 });
        await release(held);
        let grant: SlotGrant | undefined;
        // Bounded: about two idle windows of the first process, never an open-ended wait.
        await eventually(async () => (grant = await second.accounts.slots.acquire(account.accountId, 2)).ok, 40, 50);
        expect(await first.accounts.slots.inUse(account.accountId)).to.equal(1);
        await release(grant ? [grant] : []);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('gives every unused slot back on a graceful stop', async () => {
      const other = await openAccounts();
      try {
        const account = await newAccount(other.accounts, { concurrency: 3 });
        const grants = await Promise.all([1, 2, 3].map(() => other.accounts.slots.acquire(account.accountId, 3)));
        expect(await handle.accounts.slots.inUse(account.accountId)).to.equal(3);
        await release(grants);
        await other.accounts.slots.stop();
        expect(await handle.accounts.slots.inUse(account.accountId)).to.equal(0);
      } finally {
        await other.close();
      }
    });
  });
});
