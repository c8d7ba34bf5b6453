import { expect } from 'chai';
import { ManualClock, type Hold } from '../../core/accounts';
import { ALLOWANCE_HOLD_MS, IDLE_FLUSHES } from '../../core/accounts/allowances';
import { chainOf } from '../../core/accounts/ledger';
import { newAccount, openAccounts, type AccountsHandle } from '../helpers/app';

/** The ledger entries of an account's period and the credits they charged (settles and allowance drains). */
async function ledgerOf(handle: AccountsHandle, accountId: string, period: string): Promise<{ entries: number; charged: number }> {
  const entries = await handle.db.db.collection('usage_ledger').find({ chain: chainOf(accountId, period) }).toArray();
  const charged = entries
    .flatMap((entry) => entry.log as Array<{ op: string; credits?: number }>)
    .filter((op) => op.op === 'settle' || op.op === 'allot' || op.op === 'drain')
    .reduce((total, op) => total + (op.credits ?? 0), 0);
  return { entries: entries.length, charged };
}

const refusedCode = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => 'granted', (error: { code?: string }) => error.code);

describe('credit allowances (pooled reservations)', () => {
  let handle: AccountsHandle;
  before(async () => {
    handle = await openAccounts({ env: { CREDIT_ALLOWANCE: '1000' } });
  });
  after(() => handle.close());

  it('takes reservations in memory, and writes each settlement before it returns, concurrent ones in a few shared writes', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 10_000 });
    const { period } = await accounts.charging.usage(account.accountId);
    // One at a time: every settled credit is in the ledger (read from the collection, no flush) when settle returns.
    let settled = 0;
    for (let n = 0; n < 30; n++) {
      const hold = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
      if (n % 3 === 0) {
        await hold.release();
        continue;
      }
      await hold.settle(1);
      settled += 1;
      expect((await ledgerOf(handle, account.accountId, period)).charged).to.equal(settled);
    }
    // Concurrent: the settlements that arrive while a write is in flight share the next one.
    const before = (await ledgerOf(handle, account.accountId, period)).entries;
    await Promise.all(
      Array.from({ length: 300 }, async (_, n) => {
        const hold = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
        await (n % 3 === 0 ? hold.release() : hold.settle(1));
      }),
    );
    const ledger = await ledgerOf(handle, account.accountId, period);
    expect(ledger.charged).to.equal(220);
    // Per-request holds would take 600 entries (a reserve and a settle each).
    expect(ledger.entries - before).to.be.at.most(20);
    expect((await accounts.charging.usage(account.accountId)).used).to.equal(220);
  });

  it('charges ahead while the work runs: the charge is in the ledger when settle returns, a failure is refunded before release returns, a dearer outcome pays the difference', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 10_000 });
    const { period } = await accounts.charging.usage(account.accountId);
    // Read from the ledger itself, without flushing this process's allowances.
    const inLedger = async (): Promise<number> => (await accounts.ledger.usage(account.accountId, period)).used;
    const settled = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
    settled.prepay();
    await settled.settle(1);
    expect(await inLedger(), 'settled at the price charged ahead').to.equal(1);
    const failed = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
    failed.prepay();
    await failed.release();
    expect(await inLedger(), 'a failure refunded').to.equal(1);
    const escalated = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
    escalated.prepay();
    await escalated.grow(5, 'fetch');
    await escalated.settle(5);
    expect(await inLedger(), 'a dearer configuration').to.equal(6);
    const cheaper = await accounts.charging.reservePooled(account.principal, 5, 'fetch');
    cheaper.prepay();
    await cheaper.settle(1);
    expect(await inLedger(), 'a cheaper outcome refunded down to its price').to.equal(7);
    await Promise.all(
      Array.from({ length: 200 }, async (_, n) => {
        const hold = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
        hold.prepay();
        await (n % 4 === 0 ? hold.release() : hold.settle(1));
      }),
    );
    expect(await inLedger(), 'concurrent charges ahead').to.equal(7 + 150);
    expect((await accounts.charging.usage(account.accountId)).used).to.equal(157);
  });

  it('lets exactly 100 of 200 concurrent requests through with 100 credits left, as per-request holds do', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 150 });
    await (await accounts.charging.reserve(account.principal, 50, 'fetch')).settle(50);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, () => refusedCode(accounts.charging.reservePooled(account.principal, 1, 'fetch').then((hold) => hold.settle(1)))),
    );
    expect(outcomes.filter((outcome) => outcome === 'granted')).to.have.length(100);
    expect(outcomes.filter((outcome) => outcome === 'AUTH004')).to.have.length(100);
    const usage = await accounts.charging.usage(account.accountId);
    expect(usage.used).to.equal(150);
    expect((await ledgerOf(handle, account.accountId, usage.period)).charged).to.equal(150);
  });

  it('grows a hold for escalation from the allowance and bills only what was settled', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 12 });
    const hold: Hold = await accounts.charging.reservePooled(account.principal, 1, 'fetch');
    await hold.grow(5, 'fetch');
    expect(await hold.tryGrow(25)).to.include({ ok: false, refused: 'credits' });
    expect(await refusedCode(accounts.charging.reservePooled(account.principal, 8, 'fetch'))).to.equal('AUTH004');
    await hold.settle(5);
    expect(await accounts.charging.usage(account.accountId)).to.include({ used: 5 });
    expect(await refusedCode(accounts.charging.reservePooled(account.principal, 7, 'fetch').then((next) => next.settle(7)))).to.equal('granted');
    expect(await accounts.charging.usage(account.accountId)).to.include({ used: 12 });
  });

  it('keeps a key within its own cap (AUTH014) while the account’s other keys go on', async () => {
    const { accounts } = handle;
    const account = await newAccount(accounts, { credits: 100, keyCap: 3 });
    const other = await accounts.store.createKey(account.accountId);
    const otherPrincipal = await accounts.principalFor(account.accountId, other.doc.key_id);
    for (let n = 0; n < 3; n++) await (await accounts.charging.reservePooled(account.principal, 1, 'fetch')).settle(1);
    expect(await refusedCode(accounts.charging.reservePooled(account.principal, 1, 'fetch'))).to.equal('AUTH014');
    await (await accounts.charging.reservePooled(otherPrincipal, 1, 'fetch')).settle(1);
    const usage = await accounts.charging.usage(account.accountId);
    expect(usage.keys).to.deep.equal({ [account.keyId]: 3, [other.doc.key_id]: 1 });
  });

  it('gives an idle allowance back after a few flushes, and charges everything settled on stop', async () => {
    const service = await openAccounts({ env: { CREDIT_ALLOWANCE: '1000' } });
    try {
      const account = await newAccount(service.accounts, { credits: 5_000 });
      await (await service.accounts.charging.reservePooled(account.principal, 5, 'fetch')).settle(5);
      const held = (await service.accounts.charging.usage(account.accountId)).held;
      expect(held).to.be.greaterThan(0).and.at.most(1_000);
      for (let n = 0; n <= IDLE_FLUSHES; n++) await service.accounts.allowances.flush();
      expect(await service.accounts.charging.usage(account.accountId)).to.include({ used: 5, held: 0 });

      await (await service.accounts.charging.reservePooled(account.principal, 10, 'fetch')).settle(10);
      await service.accounts.stop();
      // Read by another process: the stop charged the 10 credits and gave the allowance back.
      expect(await handle.accounts.charging.usage(account.accountId)).to.include({ used: 15, held: 0 });
    } finally {
      await service.close();
    }
  });

  it('returns a dead process’s allowance after its hold lapses', async () => {
    const clock = new ManualClock(Date.UTC(2031, 6, 10, 12));
    const crashed = await openAccounts({ clock, env: { CREDIT_ALLOWANCE: '1000' } });
    const survivor = await openAccounts({ clock, env: { CREDIT_ALLOWANCE: '1000' } });
    try {
      const account = await newAccount(crashed.accounts, { credits: 40 });
      // Half of what is left goes to the first allowance as headroom; the process then dies.
      await crashed.accounts.charging.reservePooled(account.principal, 1, 'fetch');
      const held = (await survivor.accounts.charging.usage(account.accountId)).held;
      expect(held).to.equal(1 + Math.floor(39 / 2));
      expect(await refusedCode(survivor.accounts.charging.reservePooled(account.principal, 40 - held + 1, 'fetch'))).to.equal('AUTH004');
      clock.advance(ALLOWANCE_HOLD_MS + 1);
      await (await survivor.accounts.charging.reservePooled(account.principal, 40, 'fetch')).settle(40);
      expect(await survivor.accounts.charging.usage(account.accountId)).to.include({ used: 40 });
    } finally {
      await crashed.close();
      await survivor.close();
    }
  });

  it('never lets two processes spend more than the account has, and loses no credit between them', async () => {
    const other = await openAccounts({ env: { CREDIT_ALLOWANCE: '1000' } });
    try {
      const account = await newAccount(handle.accounts, { credits: 100 });
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, n) => {
          const service = n % 2 === 0 ? handle.accounts : other.accounts;
          return refusedCode(service.charging.reservePooled(account.principal, 1, 'fetch').then((hold) => hold.settle(1)));
        }),
      );
      const granted = outcomes.filter((outcome) => outcome === 'granted').length;
      expect(granted).to.be.at.most(100);
      await Promise.all([handle.accounts.charging.usage(account.accountId), other.accounts.charging.usage(account.accountId)]);
      for (let n = 0; n <= IDLE_FLUSHES; n++) await Promise.all([handle.accounts.allowances.flush(), other.accounts.allowances.flush()]);
      expect(await handle.accounts.charging.usage(account.accountId)).to.include({ used: granted, held: 0 });
      // What the race left unspent is all still there.
      await (await other.accounts.charging.reservePooled(account.principal, 100 - granted, 'fetch')).settle(100 - granted);
      expect(await other.accounts.charging.usage(account.accountId)).to.include({ used: 100 });
    } finally {
      await other.close();
    }
  });

  it('writes every reservation to the ledger when CREDIT_ALLOWANCE is 0', async () => {
    const exact = await openAccounts({ env: { CREDIT_ALLOWANCE: '0' } });
    try {
      const account = await newAccount(exact.accounts, { credits: 100 });
      const hold = await exact.accounts.charging.reservePooled(account.principal, 3, 'fetch');
      expect(hold.allowance).to.equal(undefined);
      expect(await exact.accounts.charging.usage(account.accountId)).to.include({ held: 3 });
      await hold.settle(3);
      expect(await exact.accounts.charging.usage(account.accountId)).to.include({ used: 3, held: 0 });
    } finally {
      await exact.close();
    }
  });
});
