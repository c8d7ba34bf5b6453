/**
 * Markdown converters compared on the sample pages (test/fixtures/pages): fidelity, as the share of
 * the checklist each one passes, and throughput in MB of HTML per second, measured in the same run
 * with warm-up and interleaved rounds so machine noise hits every converter alike.
 *
 *   npx tsx bench/markdown.ts [--seconds=20] [--failures]
 *
 * The libraries get the best setup we could give them: turndown with the GFM plugin, ATX headings,
 * fenced code and noise elements removed; node-html-markdown with the same noise ignored. For the
 * fidelity score only, their input first has every href/src made absolute (they cannot resolve URLs
 * themselves); that pass is left out of their throughput, which flatters them.
 */
import { createRequire } from 'node:module';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import TurndownService from 'turndown';
import { toMarkdown } from '../engine/outputs';
import { documentBase, parseHtml, resolveUrl } from '../engine/outputs/dom';
import { CHECKLIST, type Category } from '../test/fixtures/pages/checklist';
import { SAMPLE_PAGES, type SamplePage } from '../test/fixtures/pages';

// The GFM plugin ships no type declarations.
const { gfm } = createRequire(__filename)('turndown-plugin-gfm') as { gfm: TurndownService.Plugin };

// Inputs stay: both libraries render task-list checkboxes from them.
const NOISE = ['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'button', 'select', 'textarea'];

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' });
turndown.use(gfm);
turndown.remove(NOISE as TurndownService.Filter);
const nhm = new NodeHtmlMarkdown({ bulletMarker: '-', ignore: NOISE });

interface Converter {
  name: string;
  convert(page: SamplePage): string;
  /** What the fidelity score sees; defaults to `convert`. */
  forFidelity?(page: SamplePage): string;
}

/** Makes href/src absolute so the libraries are not scored down for a step they do not offer. */
function absolutize(page: SamplePage): string {
  const root = parseHtml(page.html);
  const base = documentBase(root, page.url);
  for (const name of ['href', 'src']) {
    for (const el of root.querySelectorAll(`[${name}]`)) {
      const url = resolveUrl(el.getAttribute(name), base);
      if (url) el.setAttribute(name, url);
    }
  }
  return root.toString();
}

const CONVERTERS: Converter[] = [
  { name: 'engine/outputs (chosen)', convert: (page) => toMarkdown(page.html, page.url) },
  {
    name: 'turndown + gfm',
    convert: (page) => turndown.turndown(page.html),
    forFidelity: (page) => turndown.turndown(absolutize(page)),
  },
  {
    name: 'node-html-markdown',
    convert: (page) => nhm.translate(page.html),
    forFidelity: (page) => nhm.translate(absolutize(page)),
  },
];

const CATEGORIES: Category[] = ['tables', 'code', 'lists', 'links', 'images', 'text', 'noise'];
const pad = (text: string, width: number): string => text.padEnd(width);
const padStart = (text: string, width: number): string => text.padStart(width);

function fidelity(showFailures: boolean): void {
  console.log(`Fidelity: ${CHECKLIST.length} checks over ${SAMPLE_PAGES.length} pages (passed/total per category)\n`);
  console.log(`${pad('converter', 26)}${CATEGORIES.map((c) => padStart(c, 8)).join('')}${padStart('total', 10)}`);
  for (const converter of CONVERTERS) {
    const outputs = new Map(SAMPLE_PAGES.map((page) => [page.name, (converter.forFidelity ?? converter.convert)(page)]));
    const failed = CHECKLIST.filter((check) => !check.test(outputs.get(check.page) ?? ''));
    const row = CATEGORIES.map((category) => {
      const all = CHECKLIST.filter((c) => c.category === category).length;
      const bad = failed.filter((c) => c.category === category).length;
      return padStart(`${all - bad}/${all}`, 8);
    });
    const passed = CHECKLIST.length - failed.length;
    const share = ((passed / CHECKLIST.length) * 100).toFixed(0);
    console.log(`${pad(converter.name, 26)}${row.join('')}${padStart(`${passed}/${CHECKLIST.length}`, 7)} ${padStart(share, 3)}%`);
    if (showFailures) for (const check of failed) console.log(`    fails: [${check.page}] ${check.name}`);
  }
}

function throughput(seconds: number): void {
  const bytes = SAMPLE_PAGES.reduce((sum, page) => sum + Buffer.byteLength(page.html), 0);
  console.log(`\nThroughput: ${SAMPLE_PAGES.length} pages, ${(bytes / 1024).toFixed(0)} KiB per round, rounds interleaved for ~${seconds} s\n`);
  const runRound = (converter: Converter): number => {
    const start = process.hrtime.bigint();
    for (const page of SAMPLE_PAGES) converter.convert(page);
    return Number(process.hrtime.bigint() - start) / 1e9;
  };
  for (let i = 0; i < 5; i++) for (const converter of CONVERTERS) runRound(converter); // warm-up: JIT and caches
  const spent = CONVERTERS.map(() => 0);
  let rounds = 0;
  const deadline = Date.now() + seconds * 1000;
  while (rounds < 5 || Date.now() < deadline) {
    CONVERTERS.forEach((converter, i) => (spent[i] = (spent[i] ?? 0) + runRound(converter)));
    rounds++;
  }
  const rates = spent.map((time) => (bytes * rounds) / time / 1e6);
  CONVERTERS.forEach((converter, i) => {
    const perPage = ((spent[i] ?? 0) / rounds / SAMPLE_PAGES.length) * 1000;
    console.log(`${pad(converter.name, 26)}${padStart((rates[i] ?? 0).toFixed(2), 7)} MB/s  ${padStart(perPage.toFixed(2), 6)} ms/page`);
  });
  const ratio = (rates[0] ?? 0) / (rates[1] ?? 1);
  console.log(`\n${rounds} rounds. Ratio chosen/turndown: ${ratio.toFixed(2)}x`);
}

const secondsArg = process.argv.find((arg) => arg.startsWith('--seconds='));
const seconds = Math.min(Math.max(Number(secondsArg?.split('=')[1] ?? 20) || 20, 1), 50);
fidelity(process.argv.includes('--failures'));
throughput(seconds);
