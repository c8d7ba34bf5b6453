import { expect } from 'chai';
import { periodOf } from '../../core/accounts';
import { crawlCharges, sliceHoldId } from '../../core/crawls/charges';
import { crawlCollections, ids } from '../../core/crawls/store';
import { newId } from '../../base/ids';
import { accountsHandle, crawlAccount } from './helpers';

describe('crawls: billing a slice exactly once', () => {
  const usage = async (accountId: string) => (await accountsHandle()).accounts.charging.usage(accountId);

  it('bills a slice once however many attempts run it', async () => {
    const handle = await accountsHandle();
    const charges = crawlCharges(handle.db.db, handle.accounts);
    const account = await crawlAccount({ credits: 100 });
    const crawlId = newId('c');

    const first = await charges.open(crawlId, 1, account.principal, false, 10);
    expect(first.alreadyBilled).to.equal(false);
    expect(await first.need(1)).to.equal(true);
    expect(await first.need(1)).to.equal(true);
    first.giveBack(1);
    expect((await usage(account.accountId)).held).to.equal(10);
    await first.settle(1);
    expect(await usage(account.accountId)).to.deep.include({ used: 1, held: 0 });

    // A later attempt of the same slice finds the marker: it bills nothing.
    const again = await charges.open(crawlId, 1, account.principal, true, 10);
    expect(again.alreadyBilled).to.equal(true);
    expect(await again.need(25)).to.equal(true);
    await again.settle(25);
    expect(await usage(account.accountId)).to.deep.include({ used: 1, held: 0 });
  });

  it('settles the hold of an attempt that died between its marker and its settle', async () => {
    const handle = await accountsHandle();
    const charges = crawlCharges(handle.db.db, handle.accounts);
    const account = await crawlAccount({ credits: 100 });
    const crawlId = newId('c');
    const dying = await charges.open(crawlId, 2, account.principal, false, 0);
    expect(await dying.need(3)).to.equal(true);
    // The marker landed, the settle did not.
    await crawlCollections(handle.db.db).charges.insertOne({
      _id: ids.charge(crawlId, 2),
      crawl_id: crawlId,
      hold: sliceHoldId(crawlId, 2),
      period: periodOf(Date.now()),
      credits: 3,
      at: new Date(),
    });
    expect(await usage(account.accountId)).to.deep.include({ used: 0, held: 3 });
    const retry = await charges.open(crawlId, 2, account.principal, true, 5);
    expect(retry.alreadyBilled).to.equal(true);
    expect(await usage(account.accountId)).to.deep.include({ used: 3, held: 0 });
    await charges.open(crawlId, 2, account.principal, true, 5);
    expect(await usage(account.accountId)).to.deep.include({ used: 3, held: 0 });
  });

  it('reuses the hold of an attempt that died before billing, and refuses what the account cannot pay', async () => {
    const handle = await accountsHandle();
    const charges = crawlCharges(handle.db.db, handle.accounts);
    const account = await crawlAccount({ credits: 5 });
    const crawlId = newId('c');
    const dead = await charges.open(crawlId, 3, account.principal, false, 4);
    expect(await dead.need(4)).to.equal(true);
    expect((await usage(account.accountId)).held).to.equal(4);
    // The next attempt takes over the same hold instead of holding the credits twice.
    const retry = await charges.open(crawlId, 3, account.principal, true, 2);
    expect(retry.alreadyBilled).to.equal(false);
    expect((await usage(account.accountId)).held).to.equal(2);
    expect(await retry.need(1)).to.equal(true);
    expect(await retry.need(1)).to.equal(true);
    expect(await retry.need(3)).to.equal(true);
    expect(await retry.need(1), 'over the account’s credits').to.equal(false);
    await retry.settle(5);
    expect(await usage(account.accountId)).to.deep.include({ used: 5, held: 0 });
  });
});
