import { expect } from 'chai';
import { parseBoolean } from '../../../base/boolean';
import { Semaphore } from '../../../base/semaphore';
import { FAILURES, failureOf } from '../../../engine/failures';
import { cycles } from '../../../scripts/import-cycles';

describe('one boolean reading', () => {
  it('reads true/1 and false/0 in any case; the environment also yes/on and no/off/empty', () => {
    expect(['true', 'TRUE', ' 1 '].map((raw) => parseBoolean(raw))).to.deep.equal([true, true, true]);
    expect(['false', '0'].map((raw) => parseBoolean(raw))).to.deep.equal([false, false]);
    expect(['yes', 'on', '', 'maybe'].map((raw) => parseBoolean(raw))).to.deep.equal([undefined, undefined, undefined, undefined]);
    expect(['yes', 'on'].map((raw) => parseBoolean(raw, 'environment'))).to.deep.equal([true, true]);
    expect(['no', 'off', ''].map((raw) => parseBoolean(raw, 'environment'))).to.deep.equal([false, false, false]);
  });
});

describe('the semaphore', () => {
  it('hands a freed turn to the first waiter, and gives up at a deadline, on abort and when closed', async () => {
    const semaphore = new Semaphore(1);
    const first = await semaphore.acquire();
    const order: string[] = [];
    const second = semaphore.acquire().then((release) => {
      order.push('second');
      return release;
    });
    const third = semaphore.acquire().then((release) => {
      order.push('third');
      release();
    });
    first();
    (await second)();
    await third;
    expect(order).to.deep.equal(['second', 'third']);
    expect(semaphore.idle).to.equal(true);

    const held = await semaphore.acquire();
    expect(await semaphore.take({ deadline: 0 })).to.deep.equal({ ok: false, reason: 'timeout' });
    const controller = new AbortController();
    const aborted = semaphore.take({ signal: controller.signal });
    controller.abort();
    expect(await aborted).to.deep.equal({ ok: false, reason: 'aborted' });
    const waiting = semaphore.take();
    semaphore.close();
    expect(await waiting).to.deep.equal({ ok: false, reason: 'closed' });
    held();
  });
});

describe('the failure table', () => {
  it('says per kind whether another configuration or a retry can help', () => {
    expect(FAILURES.target_forbidden).to.deep.include({ code: 'REQS001', blame: 'caller', escalate: false, retry: false });
    expect(FAILURES.timeout, 'a time-out is not a block, but later may work').to.deep.include({ escalate: false, retry: true });
    expect(FAILURES.connect_failed).to.deep.include({ escalate: true, retry: true });
    expect(FAILURES.dns_failed).to.deep.include({ escalate: false, retry: false });
    expect(failureOf('a kind nobody wrote down')).to.equal(FAILURES.internal);
  });

  it('says which failures are not the work\'s outcome (the service gave the work up itself)', () => {
    expect(FAILURES.aborted.final).to.equal(false);
    expect(FAILURES.pool_closed.final).to.equal(false);
    expect(FAILURES.timeout.final, 'the target took too long: an outcome').to.equal(true);
    expect(FAILURES.dns_failed.final).to.equal(true);
  });
});

describe('the import-cycle rule', () => {
  it('finds cycles, self-imports included, and nothing in a tree', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['d.ts']],
      ['e.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).to.deep.equal([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
    expect(cycles(new Map([['x.ts', ['y.ts']], ['y.ts', []]]))).to.deep.equal([]);
  });
});
