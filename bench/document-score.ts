/**
 * Reading a Markdown output for bench/documents.ts, the same for ours and MarkItDown's: text F1 of
 * word 4-grams (text-score.ts, the article benchmark's metric) and the recall of the headings, list
 * items and table rows a document holds (its truth, from test/fixtures/documents).
 */
import path from 'node:path';
import type { Truth } from '../test/fixtures/documents/corpus';
import { scorePage, summarize, type PageScore } from './text-score';

export const FORMATS = ['pdf', 'docx', 'pptx', 'xlsx'] as const;
export type Format = (typeof FORMATS)[number];

export interface Sample {
  file: string;
  format: Format;
  truth: Truth;
}

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

export function structure(markdown: string): Structure {
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

export interface Scores {
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

/** Prints one table row per format for `name`, and (with `failures`) what each document lost. */
export function report(name: string, samples: Sample[], outputs: Map<string, string>, failures = false): Map<Format, Scores> {
  const byFormat = new Map<Format, Scores>(FORMATS.map((f) => [f, { ...emptyScores(), ...(failures ? { misses: [] } : {}) }]));
  for (const sample of samples) score(byFormat.get(sample.format)!, sample, outputs.get(sample.file) ?? '');
  for (const format of FORMATS) {
    const s = byFormat.get(format)!;
    const text = summarize(s.text);
    console.log(`| ${name} | ${format} | ${text.f1.toFixed(3)} | ${text.precision.toFixed(3)} | ${text.recall.toFixed(3)} | ${ratio(s.headings)} | ${ratio(s.items)} | ${ratio(s.rows)} |`);
  }
  for (const format of FORMATS) for (const miss of byFormat.get(format)!.misses ?? []) console.log(`  lost: ${miss}`);
  return byFormat;
}

/** Text F1 of one output against its truth (the long PDF's line). */
export function textF1(truth: Truth, markdown: string): number {
  return summarize([scorePage('one', truth.text, structure(markdown).text)]).f1;
}
