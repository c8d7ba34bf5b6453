/**
 * Documents to Markdown: 40 seeded documents (10 each of PDF, DOCX, PPTX, XLSX, from
 * test/fixtures/documents), converted by ours (engine/documents, in-process) and by MarkItDown 0.1.9
 * (PyPI, installed by this script into a virtualenv under the stack folder) in the same run. Per format:
 * text F1 of word 4-grams (bench/text-score.ts, the article benchmark's metric), and recall of the
 * headings, list items and table rows each document holds, read from each Markdown output the same
 * way; then documents per second of each, in-process. Last, a 300-page PDF converted through the
 * worker pool (default caps) in a child process, with its time and the process's peak memory.
 *
 * PDFs: printed by Chromium (Debian's, through playwright-core) from the seeded HTML in five layouts:
 * one or two columns, tables with or without borders, serif or sans, ragged or justified, level-3
 * headings sized or bold at body size, a footer with page numbers on some, an outline on half.
 *
 *   npx tsx bench/documents.ts [--per-format=10] [--long-pages=300] [--skip-peer] [--show=FILE] [--failures]
 *
 * --failures lists, for ours, each heading, list item and table row a document lost.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { processConfig } from '../base/config';
import { createDocumentPool } from '../engine/documents';
import { convertInProcess } from '../engine/documents/convert';
import { startPrinter } from '../test/fixtures/documents/chromium';
import { makeSpec, truthOf, type DocSpec, type Truth } from '../test/fixtures/documents/corpus';
import { specDocx } from '../test/fixtures/documents/docx';
import { specHtml } from '../test/fixtures/documents/html';
import { specPptx } from '../test/fixtures/documents/pptx';
import { specXlsx, xlsxTruth } from '../test/fixtures/documents/xlsx';
import { scorePage, summarize, type PageScore } from './text-score';

const MARKITDOWN_VERSION = '0.1.9';
const { values } = parseArgs({ options: { 'per-format': { type: 'string' }, 'long-pages': { type: 'string' }, 'skip-peer': { type: 'boolean' }, show: { type: 'string' }, convert: { type: 'string' }, failures: { type: 'boolean' } } });
const PER_FORMAT = Math.max(1, Number(values['per-format'] ?? 10) || 10);
const LONG_PAGES = Math.max(0, Number(values['long-pages'] ?? 300) || 0);
const FORMATS = ['pdf', 'docx', 'pptx', 'xlsx'] as const;
type Format = (typeof FORMATS)[number];

interface Sample {
  file: string;
  format: Format;
  truth: Truth;
}

const folder = (): string => path.join(processConfig().stackDir, 'bench-documents');

/** The virtualenv's python with MarkItDown installed (once; a marker file says it finished). */
function markitdownPython(): string {
  const venv = path.join(processConfig().stackDir, `markitdown-${MARKITDOWN_VERSION}`);
  const python = path.join(venv, 'bin', 'python');
  const marker = path.join(venv, '.installed');
  if (existsSync(marker)) return python;
  const run = (command: string, args: string[]): void => {
    const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  };
  console.log(`installing markitdown ${MARKITDOWN_VERSION} into ${venv} …`);
  if (!existsSync(python)) run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `markitdown[pdf,docx,xlsx,pptx]==${MARKITDOWN_VERSION}`]);
  run(python, ['-c', `import pathlib, markitdown; pathlib.Path(${JSON.stringify(marker)}).write_text("ok")`]);
  return python;
}

const PDF_VARIANTS = [
  { columns: 1, bordered: true, footer: false, sans: false, justify: false, boldHeadings: false, fontSize: 15 },
  { columns: 1, bordered: false, footer: true, sans: true, justify: false, boldHeadings: true, fontSize: 14 },
  { columns: 2, bordered: false, footer: false, sans: false, justify: true, boldHeadings: false, fontSize: 13 },
  { columns: 1, bordered: true, footer: true, sans: true, justify: true, boldHeadings: true, fontSize: 16 },
  { columns: 2, bordered: true, footer: true, sans: true, justify: false, boldHeadings: true, fontSize: 13 },
] as const;

async function makeCorpus(): Promise<Sample[]> {
  const dir = folder();
  mkdirSync(dir, { recursive: true });
  const samples: Sample[] = [];
  const printer = await startPrinter();
  try {
    for (let i = 0; i < PER_FORMAT; i++) {
      const seed = 1000 + i;
      const spec: DocSpec = makeSpec(seed);
      const variant = PDF_VARIANTS[i % PDF_VARIANTS.length]!;
      const write = (format: Format, bytes: Buffer, truth: Truth) => {
        const file = path.join(dir, `${format}-${seed}.${format}`);
        writeFileSync(file, bytes);
        samples.push({ file, format, truth });
      };
      write('pdf', await printer.print(specHtml(spec, variant), { footer: variant.footer, outline: i % 2 === 0 }), truthOf(spec));
      write('docx', await specDocx(spec), truthOf(spec));
      write('pptx', await specPptx(spec), truthOf(spec, { notes: true }));
      write('xlsx', await specXlsx(makeSpec(seed, { sections: 6 })), xlsxTruth(makeSpec(seed, { sections: 6 })));
    }
  } finally {
    await printer.close();
  }
  return samples;
}

// --- reading a Markdown output: the same for ours and MarkItDown's ---

const normalize = (text: string): string =>
  text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .replace(/[*_`]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

/** Numbers as spreadsheets libraries print them (`12.0`, `nan`) read as the value. */
const cell = (text: string): string => {
  const value = normalize(text);
  return /^\d+\.0$/.test(value) ? value.slice(0, -2) : value === 'nan' ? '' : value;
};

interface Structure {
  headings: Set<string>;
  items: Set<string>;
  rows: Set<string>;
  text: string;
}

function structure(markdown: string): Structure {
  const headings = new Set<string>();
  const items = new Set<string>();
  const rows = new Set<string>();
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) headings.add(normalize(heading[1]!));
    const item = /^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$/.exec(line);
    if (item) items.add(normalize(item[1]!));
    if (/^\s*\|.*\|\s*$/.test(line) && !/^\s*\|[\s:|-]+\|\s*$/.test(line)) {
      const cells = line.trim().slice(1, -1).split(/(?<!\\)\|/).map(cell).filter(Boolean);
      rows.add(cells.join(' | '));
    }
  }
  // Text for the F1: what a reader sees (link targets, comments and table rules left out).
  const text = markdown.replace(/<!--[\s\S]*?-->/g, ' ').replace(/\]\([^)]*\)/g, ']');
  return { headings, items, rows, text };
}

interface Scores {
  misses?: string[];
  text: PageScore[];
  headings: [number, number];
  items: [number, number];
  rows: [number, number];
}

const emptyScores = (): Scores => ({ text: [], headings: [0, 0], items: [0, 0], rows: [0, 0] });

function score(scores: Scores, sample: Sample, markdown: string): void {
  const found = structure(markdown);
  scores.text.push(scorePage(sample.file, sample.truth.text, found.text));
  const count = (into: [number, number], wanted: string[], have: Set<string>) => {
    for (const w of wanted) {
      into[1]++;
      if (have.has(w)) into[0]++;
      else if (scores.misses) scores.misses.push(`${path.basename(sample.file)}: ${w}`);
    }
  };
  count(scores.headings, sample.truth.headings.map(normalize), found.headings);
  count(scores.items, sample.truth.items.map(normalize), found.items);
  count(
    scores.rows,
    sample.truth.rows.map((row) => row.map(cell).filter(Boolean).join(' | ')),
    found.rows,
  );
}

const ratio = ([hit, total]: [number, number]): string => (total === 0 ? '–' : (hit / total).toFixed(3));

interface Run {
  outputs: Map<string, string>;
  /** Seconds per file. */
  seconds: Map<string, number>;
}

async function ours(samples: Sample[]): Promise<Run> {
  const outputs = new Map<string, string>();
  const seconds = new Map<string, number>();
  // One conversion first, so module loading (pdf.js, exceljs) is not counted, as MarkItDown's imports are not.
  await convertInProcess(readFileSync(samples[0]!.file), { fileName: samples[0]!.file });
  for (const sample of samples) {
    const bytes = readFileSync(sample.file);
    const started = process.hrtime.bigint();
    const result = await convertInProcess(bytes, { fileName: sample.file, speakerNotes: true });
    seconds.set(sample.file, Number(process.hrtime.bigint() - started) / 1e9);
    outputs.set(sample.file, result.ok ? result.text : '');
    if (!result.ok) console.log(`ours failed on ${sample.file}: ${result.code} ${result.reason}`);
  }
  return { outputs, seconds };
}

function peer(samples: Sample[]): Run {
  const python = markitdownPython();
  const list = path.join(folder(), 'files.json');
  const out = path.join(folder(), 'markitdown.json');
  writeFileSync(list, JSON.stringify(samples.map((s) => s.file)));
  const result = spawnSync(python, [path.join(__dirname, 'peer-markitdown.py'), list, out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`markitdown failed:\n${result.stderr}`);
  const parsed = JSON.parse(readFileSync(out, 'utf8')) as { seconds: Record<string, number>; outputs: Record<string, string> };
  return { outputs: new Map(Object.entries(parsed.outputs)), seconds: new Map(Object.entries(parsed.seconds)) };
}

function report(name: string, samples: Sample[], outputs: Map<string, string>): Map<Format, Scores> {
  const byFormat = new Map<Format, Scores>(FORMATS.map((f) => [f, { ...emptyScores(), ...(values.failures && name === 'ours' ? { misses: [] } : {}) }]));
  for (const sample of samples) score(byFormat.get(sample.format)!, sample, outputs.get(sample.file) ?? '');
  for (const format of FORMATS) {
    const s = byFormat.get(format)!;
    const text = summarize(s.text);
    console.log(`| ${name} | ${format} | ${text.f1.toFixed(3)} | ${text.precision.toFixed(3)} | ${text.recall.toFixed(3)} | ${ratio(s.headings)} | ${ratio(s.items)} | ${ratio(s.rows)} |`);
  }
  for (const format of FORMATS) for (const miss of byFormat.get(format)!.misses ?? []) console.log(`  lost: ${miss}`);
  return byFormat;
}

/**
 * The child that measures the long PDF: one conversion through a worker pool with the default caps,
 * as the service will run it; prints the time and the peak memory of the whole process (threads included).
 */
async function convertOne(file: string): Promise<void> {
  const bytes = readFileSync(file);
  const pool = createDocumentPool({ workers: 1 });
  const started = process.hrtime.bigint();
  const result = await pool.convert(bytes, { fileName: file });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pool.close();
  console.log(JSON.stringify({ seconds, ok: result.ok, pages: result.ok ? result.document.pages : null, chars: result.ok ? result.text.length : 0, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
}

async function longPdf(): Promise<void> {
  // About 1.6 sections fill a page of this layout.
  const spec = makeSpec(77, { sections: Math.round(LONG_PAGES * 1.65), paragraphs: [2, 3] });
  const printer = await startPrinter();
  const file = path.join(folder(), `long-${LONG_PAGES}.pdf`);
  try {
    writeFileSync(file, await printer.print(specHtml(spec, { bordered: true }), { footer: true }));
  } finally {
    await printer.close();
  }
  const child = spawnSync(process.execPath, ['--import', 'tsx', __filename, `--convert=${file}`], { encoding: 'utf8' });
  const line = child.stdout.trim().split('\n').pop() ?? '{}';
  const measured = JSON.parse(line) as { seconds: number; ok: boolean; pages: number; chars: number; peakRssMb: number };
  const truth = truthOf(spec);
  const markdown = await convertInProcess(readFileSync(file), {});
  const text = summarize([scorePage('long', truth.text, structure(markdown.ok ? markdown.text : '').text)]);
  console.log(`\nlong PDF: ${measured.pages} pages, ${(readFileSync(file).length / 1e6).toFixed(1)} MB, converted in ${measured.seconds.toFixed(1)} s through the worker pool of a child process whose peak RSS was ${measured.peakRssMb.toFixed(0)} MB; text F1 ${text.f1.toFixed(3)}`);
}

async function main(): Promise<void> {
  if (values.convert) return convertOne(values.convert);
  const samples = await makeCorpus();
  console.log(`${samples.length} documents in ${folder()}\n`);
  const mine = await ours(samples);
  if (values.show) console.log(mine.outputs.get(path.resolve(values.show)) ?? `no output for ${values.show}`);
  console.log('| converter | format | text F1 | precision | recall | headings | list items | table rows |');
  console.log('|---|---|---|---|---|---|---|---|');
  report('ours', samples, mine.outputs);
  let theirs: Run | undefined;
  if (!values['skip-peer']) {
    theirs = peer(samples);
    report(`MarkItDown ${MARKITDOWN_VERSION}`, samples, theirs.outputs);
  }
  console.log('\n| format | ours documents/s | MarkItDown documents/s | ratio |');
  console.log('|---|---|---|---|');
  const rate = (run: Run, format: Format | 'all') => {
    const chosen = samples.filter((s) => format === 'all' || s.format === format);
    return chosen.length / chosen.reduce((sum, s) => sum + (run.seconds.get(s.file) ?? 0), 0);
  };
  for (const format of [...FORMATS, 'all'] as const) {
    const a = rate(mine, format);
    const b = theirs ? rate(theirs, format) : NaN;
    console.log(`| ${format} | ${a.toFixed(1)} | ${theirs ? b.toFixed(1) : '–'} | ${theirs ? (a / b).toFixed(2) + '×' : '–'} |`);
  }
  if (LONG_PAGES > 0) await longPdf();
}

void main();
