/**
 * pdf.js in, raw pages out: positioned text runs with their fonts, ruling lines and bullet shapes from
 * the drawing operators (with the transformation matrix followed), link areas, and whether a page
 * paints images. pdf.js runs in this thread (its "fake worker"): the whole conversion already runs in
 * a worker of the document pool.
 */
import path from 'node:path';
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import { documentError } from '../failures';
import type { Box, LinkArea, RawPage, Rule, Run } from './types';

type PdfJs = typeof PdfJsModule;
type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;

let loaded: Promise<PdfJs> | undefined;

/** pdf.js and its worker half, loaded once per thread; the worker half is handed over so pdf.js imports nothing by URL. */
export function pdfjs(): Promise<PdfJs> {
  loaded ??= (async () => {
    const worker = await import('pdfjs-dist/legacy/build/pdf.worker.mjs');
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
    return import('pdfjs-dist/legacy/build/pdf.mjs');
  })();
  return loaded;
}

const packageFolder = (): string => path.dirname(require.resolve('pdfjs-dist/package.json'));

export async function openPdf(bytes: Uint8Array): Promise<{ lib: PdfJs; doc: PdfDocument }> {
  const lib = await pdfjs();
  const folder = packageFolder();
  const task = lib.getDocument({
    // pdf.js takes ownership of the buffer it is given: hand it a copy.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    disableAutoFetch: true,
    stopAtErrors: false,
    isOffscreenCanvasSupported: false,
    maxImageSize: 4096 * 4096,
    verbosity: 0,
    // Local files of the package: nothing is fetched.
    cMapUrl: path.join(folder, 'cmaps') + path.sep,
    cMapPacked: true,
    standardFontDataUrl: path.join(folder, 'standard_fonts') + path.sep,
    wasmUrl: path.join(folder, 'wasm') + path.sep,
    iccUrl: path.join(folder, 'iccs') + path.sep,
  });
  try {
    return { lib, doc: await task.promise };
  } catch (error) {
    await task.destroy().catch(() => undefined);
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException') throw documentError('document_encrypted', 'pdf_password', 'The PDF needs a password to be opened.');
    throw documentError('document_unreadable', 'pdf_open', 'The PDF is corrupt or truncated and could not be read.');
  }
}

type Matrix = [number, number, number, number, number, number];

const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];

function transformBox(m: Matrix, minX: number, minY: number, maxX: number, maxY: number): Box {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [x, y] of [
    [minX, minY],
    [maxX, minY],
    [minX, maxY],
    [maxX, maxY],
  ] as const) {
    xs.push(m[0] * x + m[2] * y + m[4]);
    ys.push(m[1] * x + m[3] * y + m[5]);
  }
  return { x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) };
}

const BOLD = /bold|black|heavy|semibold|demibold|extrabold|ultrabold|,b$|-b$/i;
const ITALIC = /italic|oblique|,i$|-i$/i;

export async function readPage(lib: PdfJs, doc: PdfDocument, number: number): Promise<RawPage> {
  const page = await doc.getPage(number);
  try {
    const [left, bottom, right, top] = page.view as [number, number, number, number];
    const { rules, marks, hasImages } = await drawing(lib, page);
    const runs = await textRuns(page);
    const links = await linkAreas(page);
    return { number, left, bottom, right, top, runs, rules, marks, links, hasImages };
  } finally {
    page.cleanup();
  }
}

async function drawing(lib: PdfJs, page: PdfPage): Promise<{ rules: Rule[]; marks: Box[]; hasImages: boolean }> {
  const { OPS } = lib;
  const list = await page.getOperatorList({ annotationMode: lib.AnnotationMode.DISABLE });
  const rules: Rule[] = [];
  const marks: Box[] = [];
  let hasImages = false;
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const saved: Matrix[] = [];
  const images = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageXObjectRepeat, OPS.paintImageMaskXObject, OPS.paintInlineImageXObjectGroup, OPS.paintImageMaskXObjectGroup]);
  const strokes = new Set<number>([OPS.stroke, OPS.closeStroke, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
  const fills = new Set<number>([OPS.fill, OPS.eoFill, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
  for (let i = 0; i < list.fnArray.length; i++) {
    const fn = list.fnArray[i]!;
    const args = list.argsArray[i] as unknown[];
    if (fn === OPS.save || fn === OPS.paintFormXObjectBegin) {
      saved.push(ctm);
      if (fn === OPS.paintFormXObjectBegin && Array.isArray(args[0]) && args[0].length === 6) ctm = multiply(ctm, args[0] as Matrix);
    } else if (fn === OPS.restore || fn === OPS.paintFormXObjectEnd) ctm = saved.pop() ?? ctm;
    else if (fn === OPS.transform) ctm = multiply(ctm, args as unknown as Matrix);
    else if (images.has(fn)) hasImages = true;
    else if (fn === OPS.constructPath) {
      const paint = args[0] as number;
      const minMax = args[2] as ArrayLike<number> | null;
      if (!minMax || !(strokes.has(paint) || fills.has(paint))) continue;
      const box = transformBox(ctm, minMax[0]!, minMax[1]!, minMax[2]!, minMax[3]!);
      classifyPath(box, strokes.has(paint) && !fills.has(paint), rules, marks);
    }
  }
  return { rules, marks, hasImages };
}

/** Thin shapes are ruling lines; a stroked box gives its four edges; small roundish shapes are bullets. */
function classifyPath(box: Box, strokedOnly: boolean, rules: Rule[], marks: Box[]): void {
  const width = box.x1 - box.x0;
  const height = box.y1 - box.y0;
  if (height <= 2.5 && width >= 6) rules.push({ ...box, horizontal: true });
  else if (width <= 2.5 && height >= 6) rules.push({ ...box, horizontal: false });
  else if (width >= 1.5 && height >= 1.5 && width <= 9 && height <= 9 && width / height < 2 && height / width < 2) marks.push(box);
  else if (strokedOnly && width > 9 && height > 9) {
    rules.push({ x0: box.x0, x1: box.x1, y0: box.y0, y1: box.y0, horizontal: true });
    rules.push({ x0: box.x0, x1: box.x1, y0: box.y1, y1: box.y1, horizontal: true });
    rules.push({ x0: box.x0, x1: box.x0, y0: box.y0, y1: box.y1, horizontal: false });
    rules.push({ x0: box.x1, x1: box.x1, y0: box.y0, y1: box.y1, horizontal: false });
  }
}

interface TextItem {
  str: string;
  transform: number[];
  width: number;
  fontName: string;
}

async function textRuns(page: PdfPage): Promise<Run[]> {
  const content = await page.getTextContent();
  const fonts = new Map<string, { bold: boolean; italic: boolean }>();
  const fontOf = (name: string) => {
    let font = fonts.get(name);
    if (!font) {
      let real = '';
      try {
        real = String((page.commonObjs.get(name) as { name?: string } | undefined)?.name ?? '');
      } catch {
        // Not loaded: the style stays unknown (regular).
      }
      font = { bold: BOLD.test(real), italic: ITALIC.test(real) };
      fonts.set(name, font);
    }
    return font;
  };
  const runs: Run[] = [];
  for (const raw of content.items) {
    if (!('str' in raw)) continue;
    const item = raw as TextItem;
    if (!item.str || !item.str.trim()) continue;
    const [a, b, c, d, e, f] = item.transform as [number, number, number, number, number, number];
    // Rotated text (watermarks, vertical labels) is left out of the reading flow.
    if (Math.abs(b) > 0.01 * Math.abs(a) || Math.abs(c) > 0.01 * Math.abs(d) || a <= 0) continue;
    const size = Math.abs(d);
    if (size < 1) continue;
    const font = fontOf(item.fontName);
    runs.push({ text: item.str, x0: e, x1: e + Math.max(item.width, 0), y: f, size, bold: font.bold, italic: font.italic });
  }
  return runs;
}

async function linkAreas(page: PdfPage): Promise<LinkArea[]> {
  const annotations = (await page.getAnnotations()) as { subtype?: string; url?: string; rect?: number[] }[];
  const out: LinkArea[] = [];
  for (const note of annotations) {
    if (note.subtype !== 'Link' || typeof note.url !== 'string' || !Array.isArray(note.rect)) continue;
    const [x0, y0, x1, y1] = note.rect as [number, number, number, number];
    out.push({ url: note.url, x0: Math.min(x0, x1), x1: Math.max(x0, x1), y0: Math.min(y0, y1), y1: Math.max(y0, y1) });
  }
  return out;
}

export type { PdfDocument, PdfJs };
