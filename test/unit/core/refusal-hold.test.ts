/** Refusals of a network over its failed look-ups, held before they are answered: bounded per network and in all. */
import { expect } from 'chai';
import { MAX_HELD, RefusalHold } from '../../../core/accounts/refusal-hold';

describe('held refusals of networks over their failed look-ups', () => {
  it('holds as many refusals of a network as it may, answers the next at once, and holds again once they are answered', async () => {
    const hold = new RefusalHold({ holdMs: 30, perNetwork: 2 });
    const settled: string[] = [];
    const first = [hold.hold('a'), hold.hold('a')].map((held) => held.then((result) => settled.push(result)));
    expect(await hold.hold('a'), 'the third of network a').to.equal('full');
    expect(settled, 'the held ones are not answered yet').to.deep.equal([]);
    const other = hold.hold('b');
    expect(hold.holding).to.equal(3);
    await Promise.all(first);
    expect(settled).to.deep.equal(['held', 'held']);
    expect(await other).to.equal('held');
    expect(hold.holding).to.equal(0);
    expect(await hold.hold('a'), 'network a held nothing any more').to.equal('held');
    expect(hold.counts).to.deep.equal({ held: 4, overflow: 1 });
  });

  it('holds at most MAX_HELD refusals in all, whatever the networks', async () => {
    const hold = new RefusalHold({ holdMs: 30, perNetwork: 5 });
    const all = Array.from({ length: MAX_HELD }, (_, n) => hold.hold(`n${n}`));
    expect(await hold.hold('another'), 'one more').to.equal('full');
    expect(await Promise.all(all)).to.satisfy((results: string[]) => results.every((result) => result === 'held'));
    expect(await hold.hold('another')).to.equal('held');
  });

  it('answers at once when holding is off', async () => {
    const hold = new RefusalHold({ holdMs: 0, perNetwork: 5 });
    expect(await hold.hold('a')).to.equal('full');
    expect(hold.holding).to.equal(0);
  });
});
