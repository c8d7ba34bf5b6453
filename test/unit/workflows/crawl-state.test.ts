import { expect } from 'chai';
import { OUTCOME_BLOCK, type CrawlSpec, type CrawlTuning, type SliceResult } from '../../../core/crawls/types';
import { applySlice, endWith, initialState, naturalEnd, nextProgress, nextSlice, published, sliceSize } from '../../../workflows/crawl-state';

const spec = (overrides: Partial<CrawlSpec> = {}): CrawlSpec => ({
  crawlId: 'c_test',
  accountId: 'a_test',
  keyId: 'k_test',
  url: 'https://example.com/',
  domain: 'example.com',
  maxItems: 1_000,
  maxPages: 1_000,
  include: [],
  exclude: [],
  ...overrides,
});

const tuning: CrawlTuning = { slicePages: 100, window: 3, concurrency: 4, historyLimit: 10_000 };

const result = (k: number, overrides: Partial<SliceResult> = {}): SliceResult => ({
  k,
  attempt: 1,
  found: 0,
  foundDepth: 1,
  fetched: 1,
  failed: 0,
  duplicates: 0,
  credits: 1,
  skipped: 0,
  refused: false,
  halted: false,
  ...overrides,
});

describe('the crawl workflow state', () => {
  it('starts with the start page alone, then fetches what it kept in slices of whole blocks', () => {
    const crawl = spec();
    const state = initialState();
    const seed = nextSlice(crawl, tuning, state, [], 3);
    expect(seed).to.deep.include({ k: 0, ranges: [] });
    expect(nextSlice(crawl, tuning, state, [0], 2), 'nothing is known before the seed ends').to.equal(undefined);

    applySlice(crawl, state, result(0, { found: 260, seed: { ok: true } }));
    expect(state.kept).to.equal(260);
    expect(state.pending).to.deep.equal([{ k: 0, a: 1, kept: 260, base: 0 }]);

    const slices = [nextSlice(crawl, tuning, state, [], 3), nextSlice(crawl, tuning, state, [1], 2), nextSlice(crawl, tuning, state, [1, 1], 1)];
    const ranges = slices.flatMap((slice) => slice?.ranges ?? []);
    // 260 URLs over three free slots: ranges cover every URL once, and each range but the last ends on a block boundary.
    expect(ranges.map((range) => [range.from, range.to])).to.deep.equal([[0, 100], [100, 200], [200, 260]]);
    for (const range of ranges.slice(0, -1)) expect(range.to % OUTCOME_BLOCK).to.equal(0);
    expect(slices.map((slice) => slice?.k)).to.deep.equal([1, 2, 3]);
    expect(state.frontier).to.deep.equal([]);
    expect(state.pagesAssigned).to.equal(261);
  });

  it('never assigns more pages than max_pages', () => {
    const crawl = spec({ maxPages: 30 });
    const state = initialState();
    nextSlice(crawl, tuning, state, [], 3);
    applySlice(crawl, state, result(0, { found: 500 }));
    const slice = nextSlice(crawl, tuning, state, [], 3);
    const pages = (slice?.ranges ?? []).reduce((sum, range) => sum + range.to - range.from, 0);
    expect(pages).to.equal(29);
    expect(nextSlice(crawl, tuning, state, [1], 2)).to.equal(undefined);
  });

  it('cuts results at max_items and ends completed, naming the limit reached', () => {
    const crawl = spec({ maxItems: 50 });
    const state = initialState();
    nextSlice(crawl, tuning, state, [], 3);
    applySlice(crawl, state, result(0, { found: 80 }));
    expect(state.pending).to.deep.equal([{ k: 0, a: 1, kept: 50, base: 0 }]);
    expect(state.end).to.deep.equal({ status: 'completed', stop_reason: 'max_items' });
    expect(state.frontier, 'an ended crawl fetches nothing more').to.deep.equal([]);
  });

  it('goes level by level with a depth limit, and does not open pages at the last level', () => {
    const crawl = spec({ depth: 2 });
    const state = initialState();
    nextSlice(crawl, tuning, state, [], 3);
    applySlice(crawl, state, result(0, { found: 30, foundDepth: 1 }));
    const level1 = nextSlice(crawl, tuning, state, [], 1);
    expect(level1?.ranges.map((range) => range.depth)).to.deep.equal([1]);
    applySlice(crawl, state, result(level1?.k ?? -1, { found: 40, foundDepth: 2 }));
    // URLs at the depth limit are results, not pages to open.
    expect(state.frontier).to.deep.equal([]);
    expect(state.kept).to.equal(70);
  });

  it('fails a crawl whose start page could not be read, or whose account ran dry', () => {
    const unreachable = initialState();
    nextSlice(spec(), tuning, unreachable, [], 3);
    applySlice(spec(), unreachable, result(0, { seed: { ok: false, detail: 'The start URL could not be read.' } }));
    expect(unreachable.end).to.deep.equal({ status: 'failed', error: { code: 'seed_unreachable', detail: 'The start URL could not be read.' } });

    const dry = initialState();
    nextSlice(spec(), tuning, dry, [], 3);
    applySlice(spec(), dry, result(0, { found: 10, refused: true }));
    expect(dry.end?.status).to.equal('failed');
    expect(dry.end?.error?.code).to.equal('insufficient_credits');
  });

  it('adopts a stop recorded outside the workflow, and keeps the first end it decided', () => {
    const state = initialState();
    nextSlice(spec(), tuning, state, [], 3);
    applySlice(spec(), state, result(0, { found: 5, halted: true }));
    expect(state.end).to.deep.equal({ status: 'stopped', stop_reason: 'user' });
    endWith(state, { status: 'completed' });
    expect(state.end).to.deep.equal({ status: 'stopped', stop_reason: 'user' });
  });

  it('ends by itself when nothing is left: no URL found is a failure, else completed', () => {
    const empty = initialState();
    naturalEnd(spec(), empty);
    expect(empty.end?.error?.code).to.equal('no_items_found');
    const done = initialState();
    done.kept = 3;
    done.pagesAssigned = 1_000;
    naturalEnd(spec(), done);
    expect(done.end).to.deep.equal({ status: 'completed', stop_reason: 'max_pages' });
  });

  it('publishes commits once, in numbered batches, then settles only after the end is recorded and nothing runs', () => {
    const crawl = spec();
    const state = initialState();
    nextSlice(crawl, tuning, state, [], 3);
    applySlice(crawl, state, result(0, { found: 10 }));
    const first = nextProgress(state, 1);
    expect(first).to.deep.include({ batch: 0, settled: false });
    expect(first?.commits).to.have.length(1);
    published(state, first!, 0);
    expect(state.batches).to.equal(1);
    expect(nextProgress(state, 1), 'nothing new to write').to.equal(undefined);

    endWith(state, { status: 'completed' });
    const ending = nextProgress(state, 1);
    expect(ending).to.deep.include({ commits: [], settled: false });
    published(state, ending!, 0);
    state.endRecorded = true;
    expect(nextProgress(state, 1), 'a slice still runs').to.equal(undefined);
    const settling = nextProgress(state, 0);
    expect(settling?.settled).to.equal(true);
    published(state, settling!, 0);
    expect(state.settled).to.equal(true);
    expect(nextProgress(state, 0)).to.equal(undefined);
  });

  it('takes back results dropped after the post-stop window', () => {
    const state = initialState();
    nextSlice(spec(), tuning, state, [], 3);
    applySlice(spec(), state, result(0, { found: 10 }));
    const progress = nextProgress(state, 0)!;
    published(state, progress, 10);
    expect(state.kept).to.equal(0);
    expect(state.dirty).to.equal(true);
  });

  it('sizes slices in whole outcome blocks', () => {
    expect(sliceSize({ ...tuning, slicePages: 110 })).to.equal(100);
    expect(sliceSize({ ...tuning, slicePages: 3 })).to.equal(OUTCOME_BLOCK);
  });
});
