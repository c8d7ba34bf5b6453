/**
 * Change tracking's comparison engine, in process (the measures through the service come with the
 * version store):
 *
 * 1. false changes on noise-only re-fetches: pages rendered again with new noise, compared after a
 *    probe of 2 (and 3) fetches taught the noise profile (goal 0);
 * 2. precision and recall of `changed` on real edits (price, stock, paragraphs, words, list items,
 *    table cells, headings, link targets) against noise-only re-fetches, with the share of diffs that
 *    show exactly the edit, and the field diffs of a css_extractor (goal 1.0);
 * 3. held out: the masking rules were tuned on the `tune` noise formats with seed 1; the `holdout`
 *    formats (never looked at while tuning) with other seeds are scored the same way;
 * 4. the real pages of ../shared/data/article-extraction (read from there), noise injected twice:
 *    false changes, and a one-word edit of each page: recall;
 * 5. cost: the fingerprint (snapshot of the Markdown) per page against the Markdown conversion of the
 *    same page, measured in the same run; a comparison of two versions; the diff of a 1 MB page;
 * 6. through the service (changes-service.ts): false changes, precision and recall, the overhead of
 *    `track_changes` on a Fetch, the storage of unchanged re-fetches, a 1 MB page, `as_of`.
 *
 *   npx tsx bench/changes.ts [--pages=100] [--rounds=5] [--data=DIR] [--service=false] [--engine=false] [--real=20]
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { compareSnapshots, maskLine, probeProfile, snapshotOf, type Comparison, type NoiseProfile, type Snapshot } from '../engine/changes';
import { applyCssRules, toMarkdown } from '../engine/outputs';
import { editPage, injectNoise } from '../test/fixtures/changes/inject';
import type { NoiseSet } from '../test/fixtures/changes/noise';
import { EDITS, PRODUCT_RULES, pageModel, renderPage, rotates, type PageModel } from '../test/fixtures/changes/pages';
import { seeded } from '../test/helpers/random';
import { serviceMeasures } from './changes-service';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key ?? '', value ?? 'true'] as const;
  }),
);
const PAGES = Number(args.get('pages') ?? 100);
const ROUNDS = Number(args.get('rounds') ?? 5);
const DATA = path.resolve(__dirname, '..', args.get('data') ?? '../shared/data/article-extraction');
const SERVICE = args.get('service') !== 'false';
/** Sections 1 to 5 (in process); `--engine=false` runs only the service's. */
const ENGINE = args.get('engine') !== 'false';
/** Real pages served in the service's overhead measure. */
const REAL = Number(args.get('real') ?? 20);

const snap = (model: PageModel, render: number): Snapshot => snapshotOf(toMarkdown(renderPage(model, render), model.url));
const pct = (part: number, whole: number): string => `${part}/${whole} (${((100 * part) / Math.max(1, whole)).toFixed(1)} %)`;
const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const ms = (value: number): string => `${value.toFixed(2)} ms`;

function time<T>(fn: () => T): { value: T; ms: number } {
  const start = process.hrtime.bigint();
  const value = fn();
  return { value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

// --- 1 and 3: noise-only re-fetches ---

function noiseOnly(set: NoiseSet, seed: number): void {
  let withTwo = 0;
  let withThree = 0;
  let withoutProbe = 0;
  let rotating = 0;
  let rotatingFalse = 0;
  let plainFalse = 0;
  const kinds = new Map<string, number>();
  for (let i = 0; i < PAGES; i++) {
    const model = pageModel(seed, i, set);
    const probe = [snap(model, 1), snap(model, 2), snap(model, 3)];
    const a = snap(model, 11);
    const b = snap(model, 12);
    const two = compareSnapshots(a, b, { profile: probeProfile(undefined, probe.slice(0, 2)) });
    const three = compareSnapshots(a, b, { profile: probeProfile(undefined, probe) });
    const none = compareSnapshots(a, b);
    if (two.status !== 'same') withTwo++;
    if (three.status !== 'same') withThree++;
    if (none.status !== 'same') withoutProbe++;
    if (rotates(model)) {
      rotating++;
      if (three.status !== 'same') rotatingFalse++;
    } else if (none.status !== 'same') plainFalse++;
    for (const run of three.diff?.ignored ?? []) kinds.set(run.kind, (kinds.get(run.kind) ?? 0) + run.count);
  }
  console.log(
    `  ${set} formats, seed ${seed}: false changes ${pct(withTwo, PAGES)} after a probe of 2 fetches, ${pct(withThree, PAGES)} after 3, ` +
      `${pct(withoutProbe, PAGES)} without a probe; of the ${PAGES - rotating} pages without rotating text, ${plainFalse} false by the rules alone (no probe); ` +
      `of the ${rotating} with a rotating banner or region name, ${rotatingFalse} false after 3`,
  );
  console.log(`    ignored over the pages: ${[...kinds].map(([kind, count]) => `${kind} ${count}`).join(', ')}`);
}

// --- 2 and 3: real edits ---

interface EditScore {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  exact: number;
  fieldsRight: number;
  fieldsChecked: number;
  misses: string[];
}

/** Whether the diff shows exactly the edit: every expected line removed/added, and no other line. */
function exactDiff(comparison: Comparison, removed: string[], added: string[]): boolean {
  const lines = (comparison.diff?.text ?? '').split('\n');
  const minus = lines.filter((line) => line.startsWith('-') && !line.startsWith('---'));
  const plus = lines.filter((line) => line.startsWith('+') && !line.startsWith('+++'));
  const covers = (shown: string[], wanted: string[]): boolean => wanted.every((text) => shown.some((line) => line.includes(text)));
  return covers(minus, removed) && covers(plus, added) && comparison.diff?.removed === removed.length && comparison.diff.added === added.length;
}

function realEdits(set: NoiseSet, seed: number): EditScore {
  const score: EditScore = { tp: 0, fp: 0, fn: 0, tn: 0, exact: 0, fieldsRight: 0, fieldsChecked: 0, misses: [] };
  const next = seeded(seed * 31 + 7);
  for (let i = 0; i < PAGES; i++) {
    const model = pageModel(seed, i, set);
    const profile: NoiseProfile = probeProfile(undefined, [snap(model, 1), snap(model, 2), snap(model, 3)]);
    const beforeHtml = renderPage(model, 21);
    const before = snapshotOf(toMarkdown(beforeHtml, model.url));
    // The negative of this page: the same content, new noise.
    const again = renderPage(model, 22);
    const same = compareSnapshots(before, snapshotOf(toMarkdown(again, model.url)), {
      profile,
      ...(model.price ? { fields: { previous: applyCssRules(beforeHtml, model.url, PRODUCT_RULES), current: applyCssRules(again, model.url, PRODUCT_RULES) } } : {}),
    });
    if (same.status === 'same') score.tn++;
    else score.fp++;
    for (const edit of EDITS) {
      if (!edit.applies(model)) continue;
      const result = edit.apply(model, next);
      const afterHtml = renderPage(result.model, 23 + i);
      const fields = model.price ? { previous: applyCssRules(beforeHtml, model.url, PRODUCT_RULES), current: applyCssRules(afterHtml, result.model.url, PRODUCT_RULES) } : undefined;
      const comparison = compareSnapshots(before, snapshotOf(toMarkdown(afterHtml, result.model.url)), { profile, ...(fields ? { fields } : {}) });
      if (comparison.status === 'changed') score.tp++;
      else {
        score.fn++;
        score.misses.push(`${set}/${seed} page ${i}: ${edit.name}`);
      }
      if (exactDiff(comparison, result.removed, result.added)) score.exact++;
      else if (score.misses.length < 12) score.misses.push(`${set}/${seed} page ${i}: ${edit.name}: diff not exact\n${comparison.diff?.text ?? ''}`);
      if (fields && result.fields) {
        score.fieldsChecked++;
        const names = Object.keys(comparison.diff?.fields ?? {}).sort();
        if (names.join() === [...result.fields].sort().join()) score.fieldsRight++;
        else if (score.misses.length < 12) score.misses.push(`${set}/${seed} page ${i}: ${edit.name}: fields ${names.join()} instead of ${result.fields.join()}`);
      }
    }
  }
  return score;
}

function reportEdits(set: NoiseSet, seed: number): void {
  const s = realEdits(set, seed);
  const precision = s.tp / Math.max(1, s.tp + s.fp);
  const recall = s.tp / Math.max(1, s.tp + s.fn);
  console.log(
    `  ${set} formats, seed ${seed}: ${s.tp + s.fn} edits, ${s.tn + s.fp} noise-only pairs: precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}; ` +
      `diff shows exactly the edit ${pct(s.exact, s.tp + s.fn)}; field diff right ${pct(s.fieldsRight, s.fieldsChecked)}`,
  );
  for (const miss of s.misses.slice(0, 6)) console.log(`    ${miss.replace(/\n/g, '\n      ')}`);
}

// --- 4: real pages ---

function realPages(): { id: string; url: string; html: string }[] {
  let names: string[];
  try {
    names = readdirSync(path.join(DATA, 'html')).filter((name) => name.endsWith('.html.gz')).sort();
  } catch {
    return [];
  }
  const truth = JSON.parse(readFileSync(path.join(DATA, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
  return names.map((name) => {
    const id = name.replace(/\.html\.gz$/, '');
    return { id, url: truth[id]?.url ?? `https://example.com/${id}`, html: gunzipSync(readFileSync(path.join(DATA, 'html', name))).toString('utf8') };
  });
}

function reportRealPages(pages: { id: string; url: string; html: string }[]): void {
  let falseChanges = 0;
  let edits = 0;
  let found = 0;
  let shown = 0;
  let hidden = 0;
  const examples: string[] = [];
  pages.forEach((page, index) => {
    const s = (seed: number): Snapshot => snapshotOf(toMarkdown(injectNoise(page.html, index + 1, seed), page.url));
    const profile = probeProfile(undefined, [s(1), s(2)]);
    const a = s(3);
    const same = compareSnapshots(a, s(4), { profile });
    if (same.status !== 'same') {
      falseChanges++;
      if (examples.length < 3) examples.push(`${page.id.slice(0, 12)}:\n${same.diff?.text.slice(0, 600) ?? ''}`);
    }
    const edited = editPage(page.html);
    if (!edited) return;
    const editedMarkdown = toMarkdown(injectNoise(edited.html, index + 1, 5), page.url);
    // An edit counts only where a reader sees it (the paragraph may sit in a hidden block or a noscript).
    if (!editedMarkdown.includes(edited.word)) {
      hidden++;
      return;
    }
    edits++;
    const changed = compareSnapshots(a, snapshotOf(editedMarkdown), { profile });
    if (changed.status === 'changed') found++;
    if (changed.diff?.text.includes(edited.word) && changed.diff.added === 1 && changed.diff.removed === 1) shown++;
  });
  console.log(`  ${pages.length} pages: false changes on noise-only answers ${pct(falseChanges, pages.length)} (probe of 2 fetches)`);
  console.log(`  one-word edits of visible text: recall ${pct(found, edits)}, diff of exactly the edited line ${pct(shown, edits)} (${hidden} pages whose first long paragraph is not shown were left out)`);
  for (const example of examples) console.log(`    ${example.replace(/\n/g, '\n      ')}`);
}

// --- 5: cost ---

function cost(pages: { url: string; html: string }[]): void {
  const markdown: number[] = [];
  const fingerprint: number[] = [];
  const ratios: number[] = [];
  const compareSame: number[] = [];
  for (const page of pages) {
    toMarkdown(page.html, page.url);
    snapshotOf(toMarkdown(page.html, page.url));
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const page of pages) {
      const converted = time(() => toMarkdown(page.html, page.url));
      const snapped = time(() => snapshotOf(converted.value));
      const twin = snapshotOf(converted.value);
      const compared = time(() => compareSnapshots(snapped.value, twin));
      markdown.push(converted.ms);
      fingerprint.push(snapped.ms);
      ratios.push(snapped.ms / converted.ms);
      compareSame.push(compared.ms);
    }
  }
  const total = (values: number[]): number => values.reduce((sum, v) => sum + v, 0);
  console.log(
    `  Markdown conversion p50 ${ms(quantile(markdown, 0.5))}, fingerprint (snapshot of the Markdown) p50 ${ms(quantile(fingerprint, 0.5))}: ` +
      `per-page ratio p50 ${quantile(ratios, 0.5).toFixed(3)}, p90 ${quantile(ratios, 0.9).toFixed(3)}; over all pages ${(total(fingerprint) / total(markdown)).toFixed(3)} of the conversion`,
  );
  console.log(`  so conversion + fingerprint is ${(1 + total(fingerprint) / total(markdown)).toFixed(3)}× the conversion alone; comparing two equal versions p50 ${ms(quantile(compareSame, 0.5))}`);
}

function bigPage(): void {
  const model = pageModel(42, 0, 'all');
  const next = seeded(4242);
  model.paragraphs = Array.from({ length: 2600 }, (_, k) => `Section ${k}: ${Array.from({ length: 40 }, () => ['market', 'river', 'signal', 'winter', 'engine', 'paper', 'design', 'quiet'][Math.floor(next() * 8)]).join(' ')}.`);
  model.items = Array.from({ length: 400 }, (_, k) => `Item ${k} ${Math.floor(next() * 1e6)}`);
  const html = renderPage(model, 1);
  const edited = structuredClone(model);
  for (let k = 0; k < 50; k++) {
    const index = Math.floor(next() * edited.paragraphs.length);
    edited.paragraphs[index] = `${edited.paragraphs[index]} Edited ${k}.`;
  }
  edited.paragraphs.splice(100, 20);
  edited.paragraphs.splice(1500, 0, ...Array.from({ length: 15 }, (_, k) => `New section ${k}.`));
  const editedHtml = renderPage(edited, 2);
  const other = renderPage({ ...pageModel(43, 0, 'all'), paragraphs: model.paragraphs.map((p) => p.split(' ').reverse().join(' ')) }, 3);
  const convert = (page: string): ReturnType<typeof time<string>> => time(() => toMarkdown(page, model.url));
  const runs: { convert: number; snapshot: number; diff: number; unrelated: number }[] = [];
  let last: Comparison | undefined;
  let lastUnrelated: Comparison | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const a = convert(html);
    const b = convert(editedHtml);
    const c = convert(other);
    const sa = time(() => snapshotOf(a.value));
    const sb = time(() => snapshotOf(b.value));
    const sc = snapshotOf(c.value);
    const diff = time(() => compareSnapshots(sa.value, sb.value));
    const unrelated = time(() => compareSnapshots(sa.value, sc));
    last = diff.value;
    lastUnrelated = unrelated.value;
    runs.push({ convert: a.ms, snapshot: sa.ms + sb.ms, diff: diff.ms, unrelated: unrelated.ms });
  }
  const med = (key: 'convert' | 'snapshot' | 'diff' | 'unrelated'): number => quantile(runs.map((run) => run[key]), 0.5);
  console.log(`  page of ${(html.length / 1e6).toFixed(2)} MB HTML, ${toMarkdown(html, model.url).split('\n').length} Markdown lines, 50 paragraphs edited, 20 removed, 15 added:`);
  console.log(`    Markdown conversion ${ms(med('convert'))} per version; snapshots of both ${ms(med('snapshot'))}; comparison with the diff ${ms(med('diff'))} (+${last?.diff?.added} −${last?.diff?.removed} lines${last?.diff?.approximate ? ', approximate' : ''})`);
  console.log(`    against an unrelated 1 MB page: ${ms(med('unrelated'))} (+${lastUnrelated?.diff?.added} −${lastUnrelated?.diff?.removed} lines${lastUnrelated?.diff?.approximate ? ', approximate' : ''}${lastUnrelated?.diff?.truncated ? ', text truncated' : ''})`);
}

/** Hostile lines at two sizes: time grows with the length (ratio near 4 for 4× the length), never with its square. */
function hostile(): void {
  const patterns: Array<[string, (n: number) => string]> = [
    ['unclosed link targets', (n) => '](x'.repeat(n / 3)],
    ['one long joined run', (n) => 'a-'.repeat(n / 2)],
    ['clock-like digits', (n) => '1:2'.repeat(n / 3)],
    ['month names', (n) => 'May '.repeat(n / 4)],
    ['label after label', (n) => 'Request ID: '.repeat(n / 12)],
    ['random base64', (n) => Array.from({ length: n }, (_, k) => 'aZ3+/k9Q'[k % 8]).join('')],
  ];
  const rows: string[] = [];
  for (const [name, make] of patterns) {
    const small = make(200_000);
    const large = make(800_000);
    for (let warm = 0; warm < 3; warm++) maskLine(small);
    const a = quantile(Array.from({ length: ROUNDS }, () => time(() => maskLine(small)).ms), 0.5);
    const b = quantile(Array.from({ length: ROUNDS }, () => time(() => maskLine(large)).ms), 0.5);
    rows.push(`${name} ${ms(a)} → ${ms(b)} (×${(b / a).toFixed(1)})`);
  }
  console.log(`  200 K → 800 K characters on one line: ${rows.join('; ')}`);
}

async function main(): Promise<void> {
  if (!ENGINE) {
    console.log(`6. Change tracking through the service (${PAGES} pages per measure, ${ROUNDS} rounds)`);
    await serviceMeasures({ pages: PAGES, rounds: ROUNDS, real: realPages().slice(0, REAL) });
    return;
  }
  console.log(`Change tracking, in process: ${PAGES} generated pages per set, ${ROUNDS} timing rounds\n`);
  console.log('1. False changes on noise-only re-fetches (goal 0)');
  noiseOnly('tune', 1);
  for (const seed of [2, 3, 4]) noiseOnly('holdout', seed);
  console.log('\n2. Real edits: precision and recall of `changed` (goal 1.0)');
  reportEdits('tune', 1);
  for (const seed of [2, 3]) reportEdits('holdout', seed);
  const pages = realPages();
  console.log(`\n4. Real pages (${DATA})`);
  if (pages.length === 0) console.log('  not found: pass --data=DIR');
  else reportRealPages(pages);
  console.log('\n5. Cost');
  const generated = Array.from({ length: PAGES }, (_, i) => {
    const model = pageModel(1, i, 'all');
    return { url: model.url, html: renderPage(model, 1) };
  });
  console.log(' generated pages:');
  cost(generated);
  if (pages.length > 0) {
    console.log(' real pages:');
    cost(pages);
  }
  console.log(' diff of a 1 MB page:');
  bigPage();
  console.log(' hostile input:');
  hostile();
  if (SERVICE) {
    console.log(`\n6. Through the service (${PAGES} pages per measure, ${ROUNDS} rounds)`);
    await serviceMeasures({ pages: PAGES, rounds: ROUNDS, real: pages.slice(0, REAL) });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
