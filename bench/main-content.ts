/**
 * Main-content extraction on the article extraction benchmark's developer split (120 news and blog
 * pages with their true article bodies), read at run time from ../shared/data/article-extraction
 * (relative to the project root; the data is not part of the repository).
 *
 * The pages are split into `--folds` folds (5) by a hash of their id, so the split never changes.
 * Rules and thresholds of the extractor are tuned on the tuning folds only (`--tuning-folds`, 0,1,2);
 * the result is the held-out folds (the others, 3 and 4), and only they are reported unless
 * `--tuning` is given (then only the tuning folds are, and `--worst` lists their worst pages: the
 * held-out pages are never listed).
 *
 * Scores our extractor and Readability (@mozilla/readability on linkedom) in the same run with the
 * folder README's metric: bags of word 4-grams, per-page precision and recall, means over pages, F1 of
 * the means, exact token accuracy, and bootstrap standard deviations (1,000 resamples, fixed seed); F1
 * per held-out fold. Then pages per second of each, interleaved rounds over the scored pages, parse
 * included. Last, the structure our Markdown keeps on the fixture pages (test/fixtures/main-content):
 * headings, list items, tables and code blocks of the article, against what the article holds.
 *
 *   npx tsx bench/main-content.ts [--seconds=10] [--data=DIR] [--only=ours|readability]
 *                                 [--folds=5] [--tuning-folds=0,1,2] [--tuning [--worst=10]]
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { mainContentMarkdown, mainContentText } from '../engine/outputs/main-content';
import { MAIN_CONTENT_CASES, markdownStructure, type Structure } from '../test/fixtures/main-content';
import { mean, scorePage, summarize, type PageScore, type Summary } from './text-score';

const args = new Map(process.argv.slice(2).map((arg) => {
  const [key, value] = arg.replace(/^--/, '').split('=');
  return [key ?? '', value ?? 'true'] as const;
}));
const DATA = path.resolve(__dirname, '..', args.get('data') ?? '../shared/data/article-extraction');
const SECONDS = Number(args.get('seconds') ?? 10);
const FOLDS = Number(args.get('folds') ?? 5);
const TUNING_FOLDS = new Set(String(args.get('tuning-folds') ?? '0,1,2').split(',').map(Number));
/** Score the tuning folds instead of the held-out ones (while changing the extractor). */
const TUNING = args.has('tuning');
const WORST = TUNING ? Number(args.get('worst') ?? 0) : 0;

/** A page's fold: a hash of its id, so the split is the same on every run and machine. */
const foldOf = (id: string): number => createHash('sha256').update(id).digest().readUInt32BE(0) % FOLDS;

interface Item {
  id: string;
  url: string;
  html: string;
  truth: string;
}

function loadItems(): Item[] {
  const truth = JSON.parse(readFileSync(path.join(DATA, 'ground-truth.json'), 'utf8')) as Record<string, { articleBody: string; url: string }>;
  return readdirSync(path.join(DATA, 'html'))
    .filter((name) => name.endsWith('.html.gz'))
    .sort()
    .map((name) => {
      const id = name.replace(/\.html\.gz$/, '');
      const entry = truth[id];
      if (!entry) throw new Error(`no ground truth for ${id}`);
      return { id, url: entry.url, html: gunzipSync(readFileSync(path.join(DATA, 'html', name))).toString('utf8'), truth: entry.articleBody };
    });
}

// --- the metric, as the data's README defines it: bench/text-score.ts ---

/** Standard deviation of each measure over 1,000 resamples of the pages (seeded, so runs compare). */
function bootstrap(pages: PageScore[]): Summary {
  let seed = 0x2545f491;
  const random = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x100000000;
  };
  const samples: Summary[] = [];
  for (let round = 0; round < 1000; round++) samples.push(summarize(pages.map(() => pages[Math.floor(random() * pages.length)] as PageScore)));
  const sd = (key: keyof Summary): number => {
    const m = mean(samples.map((s) => s[key]));
    return Math.sqrt(mean(samples.map((s) => (s[key] - m) ** 2)));
  };
  return { f1: sd('f1'), precision: sd('precision'), recall: sd('recall'), accuracy: sd('accuracy') };
}

// --- the extractors ---

interface Extractor {
  name: string;
  extract(item: Item): string;
}

const EXTRACTORS: Extractor[] = [
  { name: 'ours (engine/outputs/main-content)', extract: (item: Item) => mainContentText(item.html, item.url) },
  {
    name: 'Readability.js (linkedom)',
    extract: (item: Item) => {
      const { document } = parseHTML(item.html) as unknown as { document: ReadabilityDocument };
      return new Readability(document).parse()?.textContent ?? '';
    },
  },
].filter((e) => !args.has('only') || e.name.toLowerCase().startsWith(String(args.get('only'))));

/** The DOM type Readability takes; the project compiles without the DOM library, so it is named from the constructor. */
type ReadabilityDocument = ConstructorParameters<typeof Readability>[0];

const fmt = (value: number): string => value.toFixed(3);

function main(): void {
  const all = loadItems();
  const scored = (fold: number): boolean => TUNING_FOLDS.has(fold) === TUNING;
  const items = all.filter((item) => scored(foldOf(item.id)));
  const folds = [...new Set(items.map((item) => foldOf(item.id)))].sort((a, b) => a - b);
  const which = TUNING ? 'TUNING folds (what the extractor is tuned on; not a result)' : 'held-out folds (never tuned on)';
  console.log(`${all.length} pages from ${DATA} in ${FOLDS} folds by a hash of their id; scored: ${which} ${folds.join(', ')}, ${items.length} pages; the other ${all.length - items.length} are left out\n`);
  console.log('| extractor | F1 | precision | recall | accuracy | pages/s |');
  console.log('|---|---|---|---|---|---|');
  const rows: string[] = [];
  const perPage = new Map<string, PageScore[]>();
  const perFold: string[] = [];
  for (const extractor of EXTRACTORS) {
    const pages = items.map((item) => scorePage(item.id, item.truth, extractor.extract(item)));
    perPage.set(extractor.name, pages);
    const s = summarize(pages);
    const sd = bootstrap(pages);
    rows.push(`| ${extractor.name} | ${fmt(s.f1)} ± ${fmt(sd.f1)} | ${fmt(s.precision)} | ${fmt(s.recall)} | ${fmt(s.accuracy)} |`);
    const byFold = folds.map((fold) => `fold ${fold} (${pages.filter((page) => foldOf(page.id) === fold).length} pages) ${fmt(summarize(pages.filter((page) => foldOf(page.id) === fold)).f1)}`);
    perFold.push(`${extractor.name}: ${byFold.join(', ')}`);
  }
  // Throughput: warm-up, then interleaved rounds of every page so machine load hits both alike.
  const time = new Map<string, number>(EXTRACTORS.map((e) => [e.name, 0]));
  const done = new Map<string, number>(EXTRACTORS.map((e) => [e.name, 0]));
  for (const extractor of EXTRACTORS) for (const item of items.slice(0, 20)) extractor.extract(item);
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) {
    for (const extractor of EXTRACTORS) {
      const start = process.hrtime.bigint();
      for (const item of items) extractor.extract(item);
      time.set(extractor.name, (time.get(extractor.name) ?? 0) + Number(process.hrtime.bigint() - start) / 1e9);
      done.set(extractor.name, (done.get(extractor.name) ?? 0) + items.length);
    }
  }
  const rates = EXTRACTORS.map((e) => (done.get(e.name) ?? 0) / (time.get(e.name) ?? 1));
  rows.forEach((row, i) => console.log(`${row} ${(rates[i] ?? 0).toFixed(1)} |`));
  console.log(`\nF1 per fold: ${perFold.join('; ')}`);
  if (rates.length === 2) console.log(`\nspeed ratio ours / Readability: ${((rates[0] ?? 0) / (rates[1] ?? 1)).toFixed(2)}×`);
  if (WORST > 0) {
    const ours = perPage.get(EXTRACTORS[0]?.name ?? '') ?? [];
    const f1 = (p: PageScore): number => {
      const pr = p.precision ?? 0;
      const re = p.recall ?? 0;
      return pr + re === 0 ? 0 : (2 * pr * re) / (pr + re);
    };
    console.log(`\nworst pages of ${EXTRACTORS[0]?.name}:`);
    for (const p of [...ours].sort((a, b) => f1(a) - f1(b)).slice(0, WORST)) {
      console.log(`${p.id.slice(0, 12)} F1 ${fmt(f1(p))} P ${fmt(p.precision ?? 0)} R ${fmt(p.recall ?? 0)} ${items.find((i) => i.id === p.id)?.url ?? ''}`);
    }
  }
}

/** Structure kept on the fixture pages, summed: what the article's Markdown has against what the article holds. */
function structureReport(): void {
  const kinds: (keyof Structure)[] = ['headings', 'listItems', 'tables', 'codeBlocks'];
  const kept: Structure = { headings: 0, listItems: 0, tables: 0, codeBlocks: 0 };
  const wanted: Structure = { headings: 0, listItems: 0, tables: 0, codeBlocks: 0 };
  for (const page of MAIN_CONTENT_CASES.filter((c) => c.article)) {
    const found = markdownStructure(mainContentMarkdown(page.html, page.url));
    for (const kind of kinds) {
      kept[kind] += Math.min(found[kind], page.structure[kind]);
      wanted[kind] += page.structure[kind];
    }
  }
  console.log(`\nstructure kept on the ${MAIN_CONTENT_CASES.filter((c) => c.article).length} fixture articles: ${kinds.map((kind) => `${kind} ${kept[kind]}/${wanted[kind]}`).join(', ')}`);
}

main();
structureReport();
