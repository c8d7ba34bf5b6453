/**
 * The browser pool's pages shared between owners (engine/browser/slots.ts): an owner holds at most its
 * share, a freed page goes to the owners waiting in turn, and waiting gives up as the render would.
 */
import { expect } from 'chai';
import { loadConfig } from '../../../base/config';
import { PlanCatalogue } from '../../../core/accounts/plans';
import { Slots } from '../../../engine/browser/slots';
import { isRenderStop } from '../../../engine/browser/types';

/** Settles pending promise callbacks. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Takes pages for `owner` and records the order in which they were granted. */
function taker(slots: Slots, granted: string[]) {
  return (owner: string, share: number) =>
    slots.acquire({ owner, share }).then((release) => {
      granted.push(owner);
      return release;
    });
}

describe('browser page slots', () => {
  it('gives an owner at most its share, and another owner the pages it leaves', async () => {
    const slots = new Slots(4);
    const granted: string[] = [];
    const take = taker(slots, granted);
    const abuser = [1, 2, 3, 4, 5].map(() => take('abuser', 2));
    await tick();
    expect(slots.heldBy('abuser')).to.equal(2);
    expect(slots.waiting).to.equal(3);
    // Another account's render needs no page of the abuser's to end first.
    const other = await take('other', 2);
    expect(slots.heldBy('other')).to.equal(1);
    expect(slots.inUse).to.equal(3);
    other();
    expect(slots.heldBy('abuser'), 'a freed page never takes an owner past its share').to.equal(2);
    (await abuser[0])?.();
    await tick();
    expect(slots.heldBy('abuser')).to.equal(2);
    expect(slots.waiting).to.equal(2);
  });

  it('serves waiting owners in turn, however long one owner’s queue is', async () => {
    const slots = new Slots(2);
    const granted: string[] = [];
    const take = taker(slots, granted);
    const first = [await take('a', 2), await take('a', 2)];
    const queued = [...Array.from({ length: 6 }, () => take('a', 2)), take('b', 2), take('c', 2)];
    await tick();
    expect(granted).to.deep.equal(['a', 'a']);
    for (const release of first) release();
    await tick();
    // a's queue came first, then b: the first freed page goes to a, the second to the next owner waiting.
    expect(granted.slice(2)).to.deep.equal(['a', 'b']);
    (await queued[0])?.();
    await tick();
    expect(granted.slice(4), 'c before a’s next render').to.deep.equal(['c']);
  });

  it('cuts a share to the pool, and gives up at the deadline, on abort and when closed', async () => {
    const slots = new Slots(2);
    const all = [await slots.acquire({ owner: 'a', share: 50 }), await slots.acquire({ owner: 'a', share: 50 })];
    expect(slots.inUse).to.equal(2);
    const late = await slots.acquire({ owner: 'b', deadline: Date.now() + 30 }).catch((error: unknown) => error);
    expect(isRenderStop(late) && late.failure.error.kind).to.equal('timeout');
    const controller = new AbortController();
    const aborted = slots.acquire({ owner: 'b', signal: controller.signal }).catch((error: unknown) => error);
    controller.abort();
    const abortedError = await aborted;
    expect(isRenderStop(abortedError) && abortedError.failure.error.kind).to.equal('aborted');
    expect(slots.waiting).to.equal(0);
    const closing = slots.acquire({ owner: 'c' }).catch((error: unknown) => error);
    slots.close();
    const closedError = await closing;
    expect(isRenderStop(closedError) && closedError.failure.error.kind).to.equal('pool_closed');
    for (const release of all) release();
  });

  it('resolves a plan’s render pages against the machine: half of it unset, never more than it', () => {
    const plans = (env: Record<string, string>) => new PlanCatalogue(loadConfig(env));
    expect(plans({}).resolve('free').limits.renderPages).to.equal(2);
    expect(plans({ BROWSER_MAX_PAGES: '1' }).resolve('free').limits.renderPages).to.equal(1);
    expect(plans({ BROWSER_MAX_PAGES: '9' }).resolve('developer').limits.renderPages).to.equal(4);
    expect(plans({ PLAN_LIMITS: 'business:render_pages=40' }).resolve('business').limits.renderPages).to.equal(4);
    expect(plans({ PLAN_LIMITS: 'business:render_pages=3' }).resolve('business').limits.renderPages).to.equal(3);
    expect(plans({}).resolve('free').limits.deadlineRenders).to.equal(5);
    expect(plans({}).resolve('business').limits.deadlineRenders).to.equal(100);
  });

  it('resolves the allowance of pages refused at a parse cap per plan, and from ACCOUNT_LIMITS', () => {
    const plans = (env: Record<string, string>) => new PlanCatalogue(loadConfig(env));
    expect(['free', 'developer', 'business'].map((plan) => plans({}).resolve(plan).limits.cappedPages)).to.deep.equal([20, 100, 500]);
    const held = 'mcp_sessions=20,scheduled_jobs=5,stored_inputs=20,stored_input_bytes=200mb,concurrent_exports=3';
    expect(plans({ ACCOUNT_LIMITS: `${held},capped_pages=3` }).resolve('free').limits.cappedPages).to.equal(3);
    expect(() => loadConfig({ ACCOUNT_LIMITS: `${held},capped_pages=-1` })).to.throw(/ACCOUNT_LIMITS/);
  });
});
