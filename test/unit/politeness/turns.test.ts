import { expect } from 'chai';
import { FairTurns, GateKeys } from '../../../engine/politeness';

describe('host gate, inside a process', () => {
  it('gives the next turn to waiting accounts in rotation, so one account cannot take them all', async () => {
    const turns = new FairTurns(1);
    const order: string[] = [];
    const first = await turns.take('busy');
    const waiting = [
      ...Array.from({ length: 4 }, () => turns.take('busy').then((done) => ({ account: 'busy', done }))),
      turns.take('small').then((done) => ({ account: 'small', done })),
    ];
    const settle = async (): Promise<void> => {
      for (let round = 0; round < waiting.length; round++) {
        const next = await Promise.race(waiting.map((promise, index) => promise.then((value) => ({ ...value, index }))));
        order.push(next.account);
        waiting[next.index] = new Promise(() => undefined);
        next.done();
      }
    };
    first();
    await settle();
    expect(order.slice(0, 2)).to.deep.equal(['busy', 'small']);
    expect(order).to.have.length(5);
    expect(turns.idle).to.equal(true);
  });

  it('keys a request on its exact host, and on its registrable domain when a budget names it', () => {
    const keys = new GateKeys({ defaults: { rate: 0, concurrency: 16 }, named: [{ name: 'shop.test', rate: 10, concurrency: 4 }, { name: 'api.other.test', rate: 2 }] });
    expect(keys.of(new URL('http://www.shop.test:8080/a'))).to.deep.equal([
      { key: 'www.shop.test:8080', budget: { rate: 0, concurrency: 16 }, host: true },
      { key: '*.shop.test', budget: { rate: 10, concurrency: 4 }, host: false },
    ]);
    expect(keys.of(new URL('http://api.other.test/x'))).to.deep.equal([{ key: 'api.other.test', budget: { rate: 2, concurrency: 16 }, host: true }]);
    expect(keys.of(new URL('http://127.0.0.1:9/x'))).to.deep.equal([{ key: '127.0.0.1:9', budget: { rate: 0, concurrency: 16 }, host: true }]);
  });
});
