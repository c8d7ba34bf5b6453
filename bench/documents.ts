/**
 * Documents to Markdown through the service: 40 seeded documents (10 each of PDF, DOCX, PPTX, XLSX,
 * from test/fixtures/documents) uploaded to `POST /v1/documents` and fetched with
 * `response_type=markdown` from a loopback site, against MarkItDown 0.1.9 (PyPI, installed by this
 * script into a virtualenv under the stack folder) on the same files in the same run. Per format:
 * text F1 of word 4-grams (bench/text-score.ts, the article benchmark's metric) and recall of the
 * headings, list items and table rows each document holds, read from each Markdown the same way
 * (bench/document-score.ts); documents per second through the service (each file timed alone, as
 * MarkItDown's in-process loop times each, and all at once at `--concurrency`); then a 300-page PDF
 * through the service, with its time, its price and the API process's peak memory while it converted
 * (the document pool's threads run in that process).
 *
 * PDFs: printed by Chromium (Debian's, through playwright-core) from the seeded HTML in five layouts:
 * one or two columns, tables with or without borders, serif or sans, ragged or justified, level-3
 * headings sized or bold at body size, a footer with page numbers on some, an outline on half.
 *
 *   npx tsx bench/documents.ts [--per-format=10] [--long-pages=300] [--concurrency=4] [--cache=DIR] [--skip-peer] [--failures]
 *
 * --failures lists, for ours, each heading, list item and table row a document lost.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { createLogger } from '../base/log';
import { createAccounts } from '../core/accounts';
import { SERVICE_INDEXES } from '../core/indexes';
import { Stack } from '../scripts/stack/stack';
import { startPrinter } from '../test/fixtures/documents/chromium';
import { makeSpec, truthOf, type DocSpec, type Truth } from '../test/fixtures/documents/corpus';
import { specDocx } from '../test/fixtures/documents/docx';
import { specHtml } from '../test/fixtures/documents/html';
import { specPptx } from '../test/fixtures/documents/pptx';
import { specXlsx, xlsxTruth } from '../test/fixtures/documents/xlsx';
import { FORMATS, report, textF1, type Format, type Sample } from './document-score';

const MARKITDOWN_VERSION = '0.1.9';
const { values } = parseArgs({ options: { 'per-format': { type: 'string' }, 'long-pages': { type: 'string' }, concurrency: { type: 'string' }, cache: { type: 'string' }, 'skip-peer': { type: 'boolean' }, failures: { type: 'boolean' } } });
const PER_FORMAT = Math.max(1, Number(values['per-format'] ?? 10) || 10);
const LONG_PAGES = Math.max(0, Number(values['long-pages'] ?? 300) || 0);
const CONCURRENCY = Math.max(1, Number(values.concurrency ?? 4) || 4);
const TYPES: Record<Format, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Where the corpus and MarkItDown's virtualenv are kept between runs: `--cache`, else the stack folder. */
const cache = (): string => path.resolve(values.cache ?? processConfig().stackDir);
const folder = (): string => path.join(cache(), 'bench-documents');

/** The virtualenv's python with MarkItDown installed (once; a marker file says it finished). */
function markitdownPython(): string {
  const venv = path.join(cache(), `markitdown-${MARKITDOWN_VERSION}`);
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

interface Run {
  outputs: Map<string, string>;
  /** Seconds per file. */
  seconds: Map<string, number>;
}

/** The service's side: uploads and Fetches against a loopback site serving the same files. */
interface Service {
  upload(file: string, format: Format): Promise<{ text: string; cost: string | null; status: number }>;
  fetch(file: string): Promise<{ text: string; cost: string | null; status: number }>;
  apiPid: number;
}

async function timed(samples: Sample[], convert: (sample: Sample) => Promise<{ text: string; status: number }>): Promise<Run> {
  const outputs = new Map<string, string>();
  const seconds = new Map<string, number>();
  for (const sample of samples) {
    const started = process.hrtime.bigint();
    const answer = await convert(sample);
    seconds.set(sample.file, Number(process.hrtime.bigint() - started) / 1e9);
    if (answer.status !== 200) console.log(`the service answered ${answer.status} for ${path.basename(sample.file)}: ${answer.text.slice(0, 200)}`);
    outputs.set(sample.file, answer.status === 200 ? answer.text : '');
  }
  return { outputs, seconds };
}

function merge(into: Run, from: Run): void {
  for (const [file, text] of from.outputs) into.outputs.set(file, text);
  for (const [file, seconds] of from.seconds) into.seconds.set(file, seconds);
}

/** Every sample uploaded at once, `CONCURRENCY` in flight: documents per second of the whole. */
async function concurrent(samples: Sample[], service: Service): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < samples.length) {
        const sample = samples[next++]!;
        await service.upload(sample.file, sample.format);
      }
    }),
  );
  return samples.length / (Number(process.hrtime.bigint() - started) / 1e9);
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

/** kB lines of /proc/<pid>/status. */
function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((text) => text.startsWith(`${field}:`));
  return Number(line?.replace(/\D+/g, '') ?? 0);
}

async function longPdf(service: Service): Promise<void> {
  // About 1.65 sections fill a page of this layout.
  const spec = makeSpec(77, { sections: Math.round(LONG_PAGES * 1.65), paragraphs: [2, 3] });
  const printer = await startPrinter();
  const file = path.join(folder(), `long-${LONG_PAGES}.pdf`);
  try {
    writeFileSync(file, await printer.print(specHtml(spec, { bordered: true }), { footer: true }));
  } finally {
    await printer.close();
  }
  const truth = truthOf(spec);
  const size = readFileSync(file).length;
  for (const [side, convert] of [
    ['upload', () => service.upload(file, 'pdf')],
    ['Fetch', () => service.fetch(file)],
  ] as const) {
    const before = statusKb(service.apiPid, 'VmRSS');
    // Resets the process's peak resident size (Linux clear_refs 5), so VmHWM is this conversion's peak.
    let reset = true;
    try {
      writeFileSync(`/proc/${service.apiPid}/clear_refs`, '5');
    } catch {
      reset = false;
    }
    let sampled = before;
    const sampler = setInterval(() => (sampled = Math.max(sampled, statusKb(service.apiPid, 'VmRSS'))), 25);
    const started = process.hrtime.bigint();
    const answer = await convert();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    clearInterval(sampler);
    const peak = reset ? statusKb(service.apiPid, 'VmHWM') : sampled;
    const pages = (answer.text.match(/<!-- page \d+ -->/g) ?? []).length;
    console.log(
      `long PDF through ${side}: ${answer.status}, ${pages} pages, ${(size / 1e6).toFixed(1)} MB, ${seconds.toFixed(1)} s, ${answer.cost ?? '–'} credits, text F1 ${textF1(truth, answer.text).toFixed(3)}; ` +
        `API process RSS ${(before / 1024).toFixed(0)} MB before, peak ${(peak / 1024).toFixed(0)} MB during (${reset ? 'VmHWM after a reset' : 'sampled every 25 ms'})`,
    );
  }
}

async function main(): Promise<void> {
  const samples = await makeCorpus();
  console.log(`${samples.length} documents in ${folder()}`);
  const byName = new Map(samples.map((sample) => [path.basename(sample.file), sample]));
  const site = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1));
    const sample = byName.get(name);
    const file = sample?.file ?? (name.startsWith('long-') ? path.join(folder(), name) : undefined);
    if (!file || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[sample?.format ?? 'pdf'] });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-bench-'));
  const stack = new Stack({ config: { ...processConfig(), dataDir }, ports: { api: 0, ferretdb: 0, temporal: 0, temporalUi: 0 }, serviceEnv: { LOG_LEVEL: 'warn', TARGET_ALLOWLIST: '127.0.0.1' } });
  try {
    await stack.start();
    const log = createLogger('warn');
    const config = { ...processConfig(), mongodbUrl: stack.urls.mongodb };
    const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
    const accounts = createAccounts({ db: db.db, config, log });
    const account = await accounts.store.createAccount({ plan: 'free', overrides: { credits: 10_000_000, concurrency: 64, requestsPerSecond: 1_000_000, requestBurst: 1_000_000, requestsInFlight: 1_000_000 } });
    const { key } = await accounts.store.createKey(account._id);
    await db.close();
    const api = stack.urls.api;
    const answer = async (response: Response) => ({ status: response.status, cost: response.headers.get('x-request-cost'), text: await response.text() });
    const service: Service = {
      apiPid: stack.component('api').pid ?? 0,
      upload: async (file, format) =>
        answer(await fetch(`${api}/v1/documents?document_speaker_notes=true`, { method: 'POST', body: readFileSync(file), headers: { 'X-API-Key': key, 'Content-Type': TYPES[format] } })),
      fetch: async (file) =>
        answer(await fetch(`${api}/v1/?${new URLSearchParams({ apikey: key, url: `${siteUrl}/${path.basename(file)}`, response_type: 'markdown', document_speaker_notes: 'true' }).toString()}`)),
    };
    // One of each format first: the pool's threads start and load their libraries (pdf.js, exceljs), as MarkItDown's imports are not timed.
    for (const format of FORMATS) {
      const first = samples.find((sample) => sample.format === format)!;
      await service.upload(first.file, format);
      await service.fetch(first.file);
    }
    // Format by format, ours and MarkItDown one after the other: the machine's load drifts, and weighs on both alike.
    const uploads: Run = { outputs: new Map(), seconds: new Map() };
    const fetches: Run = { outputs: new Map(), seconds: new Map() };
    const theirs: Run | undefined = values['skip-peer'] ? undefined : { outputs: new Map(), seconds: new Map() };
    for (const format of FORMATS) {
      const chosen = samples.filter((sample) => sample.format === format);
      merge(uploads, await timed(chosen, (sample) => service.upload(sample.file, sample.format)));
      if (theirs) merge(theirs, peer(chosen));
      merge(fetches, await timed(chosen, (sample) => service.fetch(sample.file)));
    }
    const together = await concurrent(samples, service);
    console.log(`\nload average during the run: ${os.loadavg().map((load) => load.toFixed(1)).join(', ')} on ${os.cpus().length} cores`);

    console.log('\n| converter | format | text F1 | precision | recall | headings | list items | table rows |');
    console.log('|---|---|---|---|---|---|---|---|');
    report('ours, POST /v1/documents', samples, uploads.outputs, values.failures);
    report('ours, Fetch', samples, fetches.outputs);
    if (theirs) report(`MarkItDown ${MARKITDOWN_VERSION}`, samples, theirs.outputs);
    const same = samples.filter((sample) => uploads.outputs.get(sample.file) === fetches.outputs.get(sample.file)).length;
    console.log(`\n${same} of ${samples.length} documents read the same through Fetch as through an upload`);

    console.log(`\n| format | upload documents/s | Fetch documents/s | MarkItDown documents/s (in-process) | upload/MarkItDown |`);
    console.log('|---|---|---|---|---|');
    const rate = (run: Run, format: Format | 'all') => {
      const chosen = samples.filter((s) => format === 'all' || s.format === format);
      return chosen.length / chosen.reduce((sum, s) => sum + (run.seconds.get(s.file) ?? 0), 0);
    };
    for (const format of [...FORMATS, 'all'] as const) {
      const a = rate(uploads, format);
      const b = theirs ? rate(theirs, format) : NaN;
      console.log(`| ${format} | ${a.toFixed(1)} | ${rate(fetches, format).toFixed(1)} | ${theirs ? b.toFixed(1) : '–'} | ${theirs ? (a / b).toFixed(2) + '×' : '–'} |`);
    }
    console.log(`all ${samples.length} uploaded ${CONCURRENCY} at a time: ${together.toFixed(1)} documents/s${theirs ? ` (${(together / rate(theirs, 'all')).toFixed(2)}× MarkItDown's in-process rate)` : ''}\n`);
    if (LONG_PAGES > 0) await longPdf(service);
  } finally {
    await stack.stop();
    site.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main();
