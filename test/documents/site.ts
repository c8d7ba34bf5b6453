/**
 * A loopback site of documents for the stack suites: seeded reports as PDF (printed by the stack's
 * Chromium), a two-column PDF, DOCX, PPTX and XLSX served with their types, a long PDF, a DOCX served
 * as application/octet-stream with a Content-Disposition name, the hostile kinds, and HTML pages that
 * link them (for crawls). Each document carries what a conversion must keep (its truth).
 */
import { expect } from 'chai';
import { startPrinter } from '../fixtures/documents/chromium';
import { makeSpec, truthOf, type DocSpec, type Truth } from '../fixtures/documents/corpus';
import { specDocx } from '../fixtures/documents/docx';
import { deepDocx, encryptedOoxml, encryptedPdf, legacyDoc, loopingPdf, truncatedPdf, xxeDocx, zipBombDocx } from '../fixtures/documents/hostile';
import { specHtml } from '../fixtures/documents/html';
import { flow, writePdf, type FlowBlock } from '../fixtures/documents/pdf-writer';
import { specPptx } from '../fixtures/documents/pptx';
import { specXlsx, xlsxTruth } from '../fixtures/documents/xlsx';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';

export const TYPES = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;

export interface ServedDocument {
  path: string;
  bytes: Buffer;
  type: string;
  truth?: Truth;
  headers?: Record<string, string>;
}

/** The hostile kinds, each with the code every surface answers. */
export const HOSTILE = [
  { path: '/hostile/bomb.docx', code: 'document_too_large', status: 413 },
  { path: '/hostile/xxe.docx', code: 'document_unreadable', status: 422 },
  { path: '/hostile/deep.docx', code: 'document_too_complex', status: 422 },
  { path: '/hostile/encrypted.pdf', code: 'document_encrypted', status: 422 },
  { path: '/hostile/encrypted.docx', code: 'document_encrypted', status: 422 },
  { path: '/hostile/loop.pdf', code: 'document_unreadable', status: 422 },
  { path: '/hostile/truncated.pdf', code: 'document_unreadable', status: 422 },
  { path: '/hostile/legacy.doc', code: 'document_unsupported', status: 415 },
] as const;

export interface DocumentSite {
  server: FixtureServer;
  documents: Map<string, ServedDocument>;
  /** The long PDF's page count (its price: 1 + 1 per started 50 pages past 50). */
  longPages: number;
  /** The two-column PDF's paragraphs in reading order (left column, then right). */
  columns: string[];
  url(path: string): string;
  close(): Promise<void>;
}

/** A long PDF of numbered sections, laid out by the test writer (fast at any length). */
function longPdf(sections: number): { pdf: Buffer; pages: number } {
  const blocks: FlowBlock[] = [];
  for (let s = 1; s <= sections; s++) {
    blocks.push({ kind: 'heading', text: `Section ${s} of the long report`, size: 16 });
    blocks.push({ kind: 'paragraph', text: `Paragraph ${s} reads steadily across the page and carries its own number ${s} so that a reader can tell where it is in the long report. `.repeat(3).trim() });
  }
  const pages = flow(blocks);
  return { pdf: writePdf(pages), pages: pages.length };
}

/** Two columns per page: paragraphs that must come back whole and in order, the left column first. */
function twoColumns(): { pdf: Buffer; paragraphs: string[] } {
  const paragraphs = Array.from({ length: 12 }, (_, i) => `Column paragraph ${i + 1} keeps its words together while the page holds two columns side by side in reading order.`);
  const blocks: FlowBlock[] = [{ kind: 'heading', text: 'Two column bulletin', size: 20 }, ...paragraphs.map((text): FlowBlock => ({ kind: 'paragraph', text }))];
  return { pdf: writePdf(flow(blocks, 2)), paragraphs };
}

export async function startDocumentSite(options: { host?: string } = {}): Promise<DocumentSite> {
  const spec: DocSpec = makeSpec(4242);
  const printer = await startPrinter();
  let report: Buffer;
  try {
    report = await printer.print(specHtml(spec, { bordered: true }), { outline: true });
  } finally {
    await printer.close();
  }
  const docx = await specDocx(spec);
  const columns = twoColumns();
  const long = longPdf(720);
  const served: ServedDocument[] = [
    { path: '/files/report.pdf', bytes: report, type: TYPES.pdf, truth: truthOf(spec) },
    { path: '/files/report.docx', bytes: docx, type: TYPES.docx, truth: truthOf(spec) },
    { path: '/files/deck.pptx', bytes: await specPptx(spec), type: TYPES.pptx, truth: truthOf(spec) },
    { path: '/files/book.xlsx', bytes: await specXlsx(spec), type: TYPES.xlsx, truth: xlsxTruth(spec) },
    { path: '/files/columns.pdf', bytes: columns.pdf, type: TYPES.pdf },
    { path: '/files/long.pdf', bytes: long.pdf, type: TYPES.pdf },
    // Many servers send files so: the name in Content-Disposition, the type generic.
    { path: '/download?id=7', bytes: docx, type: 'application/octet-stream', truth: truthOf(spec), headers: { 'content-disposition': 'attachment; filename="quarterly report.docx"' } },
    { path: '/hostile/bomb.docx', bytes: await zipBombDocx(200), type: TYPES.docx },
    { path: '/hostile/xxe.docx', bytes: xxeDocx(), type: TYPES.docx },
    { path: '/hostile/deep.docx', bytes: deepDocx(5_000), type: TYPES.docx },
    { path: '/hostile/encrypted.pdf', bytes: encryptedPdf(), type: TYPES.pdf },
    { path: '/hostile/encrypted.docx', bytes: encryptedOoxml(), type: TYPES.docx },
    { path: '/hostile/loop.pdf', bytes: loopingPdf(), type: TYPES.pdf },
    { path: '/hostile/truncated.pdf', bytes: truncatedPdf(), type: TYPES.pdf },
    { path: '/hostile/legacy.doc', bytes: legacyDoc(), type: 'application/msword' },
  ];
  const documents = new Map(served.map((document) => [document.path, document]));
  const pages = new Map<string, string>([
    ['/', '<html><body><h1>Reports</h1><a href="/files/report.pdf">PDF</a> <a href="/files/report.docx">Word</a> <a href="/files/deck.pptx">Slides</a> <a href="/files/book.xlsx">Sheet</a> <a href="/files/long.pdf">Long</a> <a href="/download?id=7">Download</a> <a href="/about">About</a></body></html>'],
    ['/about', '<html><body><h1>About</h1><p>A page among the documents.</p></body></html>'],
    ['/hostile/', '<html><body><h1>Hostile</h1><a href="/hostile/bomb.docx">Bomb</a> <a href="/about">About</a></body></html>'],
  ]);
  const server = await startFixtureServer(
    (req, res) => {
      const path = req.url ?? '/';
      const document = documents.get(path);
      if (document) {
        res.writeHead(200, { 'content-type': document.type, 'content-length': String(document.bytes.length), ...document.headers });
        res.end(document.bytes);
        return;
      }
      const page = pages.get(path);
      res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page ?? 'not found');
    },
    options.host ? { host: options.host } : {},
  );
  return {
    server,
    documents,
    longPages: long.pages,
    columns: columns.paragraphs,
    url: (path) => `${server.url.replace(/\/$/, '')}${path}`,
    close: () => server.close(),
  };
}

export function served(site: DocumentSite, path: string): ServedDocument {
  const document = site.documents.get(path);
  if (!document) throw new Error(`no document at ${path}`);
  return document;
}

const clean = (text: string): string =>
  text
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

/** Numbers as spreadsheets print them back (`12.0`) read as the value. */
const cell = (text: string): string => {
  const value = clean(text);
  return /^\d+\.0$/.test(value) ? value.slice(0, -2) : value;
};

/** Every heading, list item and table row of the truth is in the Markdown as such. */
export function expectStructure(markdown: string, truth: Truth): void {
  const headings = new Set<string>();
  const items = new Set<string>();
  const rows = new Set<string>();
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading) headings.add(clean(heading[1]!));
    const item = /^\s*(?:[-*+]|\d+[.)]) (.*)$/.exec(line);
    if (item) items.add(clean(item[1]!));
    if (/^\|.*\|$/.test(line.trim()) && !/^\|[\s|:-]+\|$/.test(line.trim())) rows.add(line.trim().slice(1, -1).split(/(?<!\\)\|/).map(cell).filter(Boolean).join(' | '));
  }
  for (const heading of truth.headings) expect(headings, `heading "${heading}"`).to.include(clean(heading));
  for (const item of truth.items) expect(items, `list item "${item}"`).to.include(clean(item));
  for (const row of truth.rows) expect(rows, `table row ${row.join(' | ')}`).to.include(row.map(cell).filter(Boolean).join(' | '));
}
