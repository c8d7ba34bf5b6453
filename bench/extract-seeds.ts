/**
 * How much Extract's outcome depends on the pages preparation happens to draw (bench/extract.ts
 * `--seeds N`), measured two ways:
 * - in this process (test/fixtures/extract-sites/prepare.ts: the workflow's steps and the engine's
 *   functions, pages read from memory), every generated site prepared under N sample seeds and scored
 *   on the pages of its grown version the preparation never read: the spread of F1, of the share of
 *   those pages recognised, and of list kinds ready;
 * - through the service: SWDE's booksamillion prepared by discovery N times, the worker restarted
 *   with `EXTRACT_SAMPLE_SEED` = 1..N before each, and scored on the same 100 held-out book pages.
 */
import type { Stack } from '../scripts/stack/stack';
import { extractPage, prepareInProcess } from '../test/fixtures/extract-sites/prepare';
import type { GeneratedSite } from '../test/fixtures/extract-sites/sites';
import { f1, score, type Counts } from '../test/fixtures/extract-sites/score';
import { mapFields, matches, SWDE_ATTRIBUTES, type SwdeSite } from './swde';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface SeededSite {
  site: GeneratedSite;
  grown: GeneratedSite;
  examples: string[];
}

const add = (into: Counts, counts: Counts): void => {
  into.tp += counts.tp;
  into.fp += counts.fp;
  into.fn += counts.fn;
};

const spread = (values: readonly number[], digits = 3): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[0]!.toFixed(digits)} / ${sorted[Math.floor(sorted.length / 2)]!.toFixed(digits)} / ${sorted[sorted.length - 1]!.toFixed(digits)}`;
};

/** Prepares each site in process under `seeds` sample seeds; prints min / median / max per site. */
export function inProcessSpread(sites: readonly SeededSite[], seeds: readonly string[]): void {
  console.log(`\nPreparation in process under ${seeds.length} sample seeds (${seeds.join(', ')}): held-out pages are those of the grown site the preparation never read`);
  console.log('| site | held-out pages | F1 min / median / max | recognised min / median / max | list kinds ready (worst seed) |');
  console.log('|---|---|---|---|---|');
  const overall: number[] = [];
  for (const { site, grown, examples } of sites) {
    const scores: number[] = [];
    const recognised: number[] = [];
    const held: number[] = [];
    let worstLists = '';
    let worstReady = Infinity;
    for (const seed of seeds) {
      const prepared = prepareInProcess(site, { seed, examples });
      const heldOut = [...grown.details, ...(grown.lists ?? [])].filter((page) => !prepared.read.has(page));
      const counts: Counts = { tp: 0, fp: 0, fn: 0 };
      let answered = 0;
      for (const page of heldOut) {
        const answer = extractPage(prepared.recipe, grown, page);
        if (answer.ok) answered++;
        add(counts, score(answer.ok ? answer.parsed : {}, grown.pages.get(page)!.truth!));
      }
      scores.push(f1(counts));
      recognised.push(heldOut.length > 0 ? answered / heldOut.length : 1);
      held.push(heldOut.length);
      const lists = prepared.roles.filter((role) => role.type === 'list');
      const ready = lists.filter((role) => role.status === 'ready').length;
      if (lists.length > 0 && ready / lists.length < worstReady) {
        worstReady = ready / lists.length;
        worstLists = `${ready} of ${lists.length}`;
      }
    }
    overall.push(...scores);
    console.log(`| ${site.host} | ${spread(held, 0)} | ${spread(scores)} | ${spread(recognised)} | ${worstLists || '(no list kind)'} |`);
  }
  console.log(`every site and seed: F1 min ${Math.min(...overall).toFixed(3)} (goal ≥ 0.98)`);
}

export interface SwdeRun {
  seed: string;
  status: string;
  roles: string;
  answered: number;
  f1: number;
  seconds: number;
  /** Book pages the preparation read. */
  read: Set<string>;
}

/**
 * booksamillion prepared by discovery once per seed, through the service. The worker is restarted
 * with the seed in its environment; the domain's record is set back to failed so a new submission
 * prepares it again (a ready domain would answer its record), and the API's recipe cache (10 s) is
 * waited out before the held-out pages are asked.
 */
export async function swdeOverSeeds(options: {
  stack: Stack;
  swde: SwdeSite;
  host: string;
  seeds: readonly string[];
  call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Json }>;
  fetchQuery: (url: string, query?: Record<string, string>) => string;
  resetDomain: (domain: string) => Promise<void>;
  /** Every request the sites server has answered so far. */
  requests: () => ReadonlyArray<{ host: string; path: string }>;
}): Promise<SwdeRun[]> {
  const { stack, swde, host, call, fetchQuery } = options;
  const runs: SwdeRun[] = [];
  for (const seed of options.seeds) {
    const worker = stack.component('worker');
    await worker.stop();
    worker.spec.env.EXTRACT_SAMPLE_SEED = seed;
    await stack.startOne('worker');
    await options.resetDomain(host);
    const before = options.requests().length;
    const started = performance.now();
    const submitted = await call('POST', '/v1/extract/prepared-domains', { domain: host });
    if (submitted.status !== 202) throw new Error(`${host} seed ${seed}: ${JSON.stringify(submitted.body)}`);
    let record: Json = submitted.body;
    while (record.status === 'preparing') {
      await new Promise((resolve) => setTimeout(resolve, 250));
      record = (await call('GET', `/v1/extract/prepared-domains/${host}`)).body;
    }
    const seconds = (performance.now() - started) / 1000;
    const read = new Set(options.requests().slice(before).filter((request) => request.host === host && request.path.startsWith('/product/')).map((request) => request.path));
    // The API keeps a domain's recipe 10 s: the previous seed's must be gone.
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const parsedOf = async (path: string): Promise<Record<string, unknown> | undefined> => {
      const answer = await call('GET', fetchQuery(`http://${host}${path}`, { extract: 'auto' }));
      return answer.status === 200 ? (answer.body.parsed as Record<string, unknown>) : undefined;
    };
    const training = [];
    for (const path of swde.train.slice(0, 20)) training.push({ parsed: (await parsedOf(path)) ?? {}, truth: swde.truth.get(path)! });
    const mapping = mapFields(training);
    const counts: Counts = { tp: 0, fp: 0, fn: 0 };
    let answered = 0;
    for (const path of swde.test) {
      const parsed = await parsedOf(path);
      if (parsed) answered++;
      for (const attribute of SWDE_ATTRIBUTES) {
        const name = mapping[attribute];
        const value = name === undefined || !parsed ? undefined : parsed[name];
        if (value === undefined) counts.fn++;
        else if (matches(attribute, value, swde.truth.get(path)![attribute])) counts.tp++;
        else {
          counts.fp++;
          counts.fn++;
        }
      }
    }
    const roles = ((record.roles ?? []) as Json[]).map((role) => `${role.role} ${role.status}`).join(', ');
    runs.push({ seed, status: record.status as string, roles, answered, f1: f1(counts), seconds, read });
  }
  // Later parts of the benchmark run with the worker as it was started.
  const worker = stack.component('worker');
  await worker.stop();
  delete worker.spec.env.EXTRACT_SAMPLE_SEED;
  await stack.startOne('worker');
  return runs;
}

export function printSwdeRuns(runs: readonly SwdeRun[], held: number): void {
  console.log(`\nSWDE booksamillion over ${runs.length} preparation seeds (EXTRACT_SAMPLE_SEED), by discovery through the service; the same ${held} held-out book pages, linked from nowhere`);
  console.log(`| seed | preparation | kinds | book pages read (shared with seed ${runs[0]?.seed ?? ''}'s) | held-out pages answered | F1 (held-out) |`);
  console.log('|---|---|---|---|---|---|');
  const first = runs[0]?.read ?? new Set<string>();
  for (const run of runs) {
    const shared = [...run.read].filter((path) => first.has(path)).length;
    console.log(`| ${run.seed} | ${run.status} in ${run.seconds.toFixed(1)} s | ${run.roles} | ${run.read.size} (${shared}) | ${run.answered} of ${held} | ${run.f1.toFixed(3)} |`);
  }
  console.log(`F1 min / median / max over seeds: ${spread(runs.map((run) => run.f1))} (goal ≥ 0.99); pages answered, fewest: ${Math.min(...runs.map((run) => run.answered))} of ${held} (goal: all)`);
}
