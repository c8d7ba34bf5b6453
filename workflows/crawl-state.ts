/**
 * The crawl workflow's state and decisions, as pure functions (no Temporal, no I/O): what the next
 * slice fetches, what a finished slice changes, when and how the crawl ends. The state holds only
 * counters and cursors into MongoDB: the frontier is a list of (slice, attempt, next, total) over the
 * URLs each slice kept, never the URLs themselves.
 *
 * With `depth`, slices go level by level (a slice of level d+1 starts only when no slice of level d
 * runs), so each URL's depth is its shortest link distance and a kept page is fetched once.
 */
import { OUTCOME_BLOCK, type Commit, type CrawlEnd, type CrawlSpec, type CrawlTuning, type Progress, type SliceInput, type SliceResult, type WorkRange } from '../core/crawls/types';

export interface FrontierEntry {
  k: number;
  a: number;
  depth: number;
  /** URLs of slice `k` to fetch, of which `next` are handed out. */
  total: number;
  next: number;
}

export interface CrawlState {
  nextK: number;
  frontier: FrontierEntry[];
  pagesAssigned: number;
  kept: number;
  fetched: number;
  failed: number;
  duplicates: number;
  /** Commits not yet published, and how many batches were. */
  pending: Commit[];
  batches: number;
  /** Counters changed since the last publish. */
  dirty: boolean;
  end?: CrawlEnd;
  /** The end record is written (and adopted: a stop call's may have won). */
  endRecorded: boolean;
  settled: boolean;
}

export const initialState = (): CrawlState => ({
  nextK: 0,
  frontier: [],
  pagesAssigned: 0,
  kept: 0,
  fetched: 0,
  failed: 0,
  duplicates: 0,
  pending: [],
  batches: 0,
  dirty: true,
  endRecorded: false,
  settled: false,
});

/** Slices fetch whole outcome blocks: a multiple of the block size. */
export const sliceSize = (tuning: CrawlTuning): number => Math.max(OUTCOME_BLOCK, Math.floor(tuning.slicePages / OUTCOME_BLOCK) * OUTCOME_BLOCK);

/** Whether URLs at `depth` are fetched: opened for links below the depth limit, or for their HTML (or their change status). */
const fetchable = (spec: CrawlSpec, depth: number): boolean => spec.outputFormat !== undefined || spec.trackChanges === true || spec.depth === undefined || depth < spec.depth;

/** The next slice to start, or undefined when nothing may start now. `running` are the depths of slices in flight. */
export function nextSlice(spec: CrawlSpec, tuning: CrawlTuning, state: CrawlState, running: number[], freeSlots: number): SliceInput | undefined {
  if (state.end || state.pagesAssigned >= spec.maxPages) return undefined;
  if (state.nextK === 0) {
    state.nextK = 1;
    state.pagesAssigned = 1;
    return { spec, tuning, k: 0, ranges: [] };
  }
  const first = state.frontier[0];
  if (!first) return undefined;
  if (spec.depth !== undefined && running.some((depth) => depth < first.depth)) return undefined;
  const budget = spec.maxPages - state.pagesAssigned;
  const available = state.frontier.reduce((sum, entry) => sum + (spec.depth === undefined || entry.depth === first.depth ? entry.total - entry.next : 0), 0);
  // Spread what is available over the free slots, in whole blocks, at most a slice.
  const share = Math.ceil(available / Math.max(1, freeSlots) / OUTCOME_BLOCK) * OUTCOME_BLOCK;
  let room = Math.min(budget, sliceSize(tuning), Math.max(OUTCOME_BLOCK, share));
  const ranges: WorkRange[] = [];
  for (const entry of state.frontier) {
    if (room <= 0) break;
    if (spec.depth !== undefined && entry.depth !== first.depth) break;
    const left = entry.total - entry.next;
    let take = Math.min(left, room);
    // A range that does not finish its entry must end on a block boundary (unless the page budget ends here).
    if (take < left && take < budget) take = Math.floor(take / OUTCOME_BLOCK) * OUTCOME_BLOCK;
    if (take <= 0) break;
    ranges.push({ k: entry.k, a: entry.a, from: entry.next, to: entry.next + take, depth: entry.depth });
    entry.next += take;
    room -= take;
  }
  state.frontier = state.frontier.filter((entry) => entry.next < entry.total);
  if (ranges.length === 0) return undefined;
  const pages = ranges.reduce((sum, range) => sum + range.to - range.from, 0);
  state.pagesAssigned += pages;
  return { spec, tuning, k: state.nextK++, ranges };
}

/** Applies a finished slice: counters, its commit, its URLs to fetch, and the end it may cause. */
export function applySlice(spec: CrawlSpec, state: CrawlState, result: SliceResult): void {
  state.fetched += result.fetched;
  state.failed += result.failed;
  state.duplicates += result.duplicates;
  state.dirty = true;
  const kept = Math.min(result.found, Math.max(0, spec.maxItems - state.kept));
  if (kept > 0) {
    state.pending.push({ k: result.k, a: result.attempt, kept, base: state.kept });
    state.kept += kept;
    if (!state.end && fetchable(spec, result.foundDepth)) {
      state.frontier.push({ k: result.k, a: result.attempt, depth: result.foundDepth, total: kept, next: 0 });
    }
  }
  if (state.end) return;
  if (result.seed && !result.seed.ok) {
    endWith(state, { status: 'failed', error: { code: 'seed_unreachable', detail: result.seed.detail } });
  } else if (result.refused) {
    endWith(state, { status: 'failed', error: { code: 'insufficient_credits', detail: 'The account ran out of credits (or the API key reached its credit cap) during the crawl.' } });
  } else if (state.kept >= spec.maxItems) {
    endWith(state, { status: 'completed', stop_reason: state.pagesAssigned >= spec.maxPages ? 'max_pages' : 'max_items' });
  } else if (result.halted) {
    // The end was recorded outside the workflow (a stop whose signal has not arrived): adopt it.
    endWith(state, { status: 'stopped', stop_reason: 'user' });
  }
}

/** When nothing runs and nothing may start: how the crawl ends by itself. */
export function naturalEnd(spec: CrawlSpec, state: CrawlState): void {
  if (state.end) return;
  if (state.kept === 0) {
    endWith(state, { status: 'failed', error: { code: 'no_items_found', detail: 'The crawl found no URL to return on the start page and the pages it opened.' } });
  } else {
    endWith(state, state.pagesAssigned >= spec.maxPages ? { status: 'completed', stop_reason: 'max_pages' } : { status: 'completed' });
  }
}

export function endWith(state: CrawlState, end: CrawlEnd): void {
  if (state.end) return;
  state.end = end;
  state.frontier = [];
  state.dirty = true;
}

/** What the next publish writes, if anything is to write. */
export function nextProgress(state: CrawlState, running: number): Progress | undefined {
  const settle = state.end !== undefined && state.endRecorded && running === 0 && !state.settled;
  if (state.pending.length === 0 && !state.dirty && !(state.end && !state.endRecorded) && !settle) return undefined;
  // Changes made while this publish runs mark the state dirty again.
  state.dirty = false;
  return {
    coverage: { pages_fetched: state.fetched, pages_failed: state.failed, items_found: state.kept },
    duplicates_removed: state.duplicates,
    commits: state.pending.slice(),
    batch: state.batches,
    settled: settle,
  };
}

/** Marks a publish as done. */
export function published(state: CrawlState, progress: Progress, droppedKept: number): void {
  state.pending = state.pending.slice(progress.commits.length);
  if (progress.commits.length > 0) state.batches++;
  if (droppedKept > 0) {
    state.kept -= droppedKept;
    state.dirty = true;
  }
  if (progress.settled) state.settled = true;
}
