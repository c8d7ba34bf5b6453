/**
 * Real pages for bench/extract.ts: SWDE's booksamillion book pages (Hao et al., SIGIR 2011), read at run
 * time from ../shared/data/swde-book-booksamillion (never copied into the repository), served as a site
 * of their own: a seeded training part listed in a generated sitemap and linked from a home page, the
 * rest served but linked from nowhere (held out). Scored per attribute, page by page, as SWDE scores:
 * a right value is a true positive, a wrong one a false positive and a false negative, a missing one a
 * false negative; values compared after decoding entities, collapsing whitespace, ignoring case and
 * the `: ` SWDE keeps after a bold label; several authors as a set; dates by month and year.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { seeded } from '../test/helpers/random';
import type { GeneratedPage, GeneratedSite } from '../test/fixtures/extract-sites/sites';

export const SWDE_ATTRIBUTES = ['title', 'author', 'isbn_13', 'publisher', 'publication_date'] as const;
export type SwdeAttribute = (typeof SWDE_ATTRIBUTES)[number];

export interface SwdeSite {
  site: GeneratedSite;
  train: string[];
  test: string[];
  /** Page path → attribute → the values SWDE lists. */
  truth: Map<string, Record<SwdeAttribute, string[]>>;
}

/** `../shared` beside the repository: the data stays outside it. */
const DEFAULT_DIR = path.resolve(__dirname, '../../shared/data/swde-book-booksamillion');

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', reg: '®', copy: '©' };
const decode = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) =>
    code[0] === '#' ? String.fromCodePoint(code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10)) : (ENTITIES[code.toLowerCase()] ?? whole),
  );
export const normalizeValue = (text: string): string =>
  decode(text)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^:\s*/, '')
    .toLowerCase();

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
function monthYear(text: string): string {
  const value = normalizeValue(text);
  const year = /\b(1[5-9]\d\d|20\d\d)\b/.exec(value)?.[1] ?? '';
  const month = MONTHS.findIndex((name) => value.includes(name.slice(0, 3)));
  return `${year}-${month}`;
}

const authors = (text: string): string[] =>
  normalizeValue(text)
    .split(/\s*(?:,|;|\band\b|&)\s*/)
    .map((name) => name.trim())
    .filter(Boolean)
    .sort();

/** Whether an extracted value is one SWDE lists for the attribute. */
export function matches(attribute: SwdeAttribute, got: unknown, truth: readonly string[]): boolean {
  if (got === undefined || got === null) return false;
  const text = Array.isArray(got) ? got.map(String).join(', ') : String(got);
  if (attribute === 'author') return JSON.stringify(authors(text)) === JSON.stringify(truth.flatMap(authors).sort());
  if (attribute === 'publication_date') return truth.some((value) => monthYear(value) === monthYear(text) && monthYear(text) !== '-1');
  return truth.some((value) => normalizeValue(value) === normalizeValue(text));
}

export function loadSwde(options: { dir?: string; host?: string; train?: number; seed?: number } = {}): SwdeSite | undefined {
  const dir = options.dir ?? DEFAULT_DIR;
  if (!existsSync(path.join(dir, 'pages'))) return undefined;
  const host = options.host ?? 'booksamillion.test';
  const ids = readdirSync(path.join(dir, 'pages'))
    .filter((name) => name.endsWith('.htm.gz'))
    .map((name) => name.slice(0, -'.htm.gz'.length))
    .sort();
  const truthById = new Map<string, Record<SwdeAttribute, string[]>>();
  for (const attribute of SWDE_ATTRIBUTES) {
    const lines = readFileSync(path.join(dir, 'groundtruth', `book-booksamillion-${attribute}.txt`), 'utf8').replace(/^\uFEFF/, '').split(/\r?\n/).slice(2);
    for (const line of lines) {
      const [id, , ...values] = line.split('\t');
      if (!id) continue;
      const entry = truthById.get(id) ?? ({} as Record<SwdeAttribute, string[]>);
      entry[attribute] = values.filter(Boolean);
      truthById.set(id, entry);
    }
  }
  // A seeded shuffle: the same training pages every run.
  const next = seeded(options.seed ?? 2011);
  const order = [...ids];
  for (let index = order.length - 1; index > 0; index--) {
    const other = Math.floor(next() * (index + 1));
    [order[index], order[other]] = [order[other]!, order[index]!];
  }
  const trainCount = options.train ?? 200;
  const pages = new Map<string, GeneratedPage>();
  const truth = new Map<string, Record<SwdeAttribute, string[]>>();
  const pathOf = (id: string) => `/product/${id}`;
  for (const id of ids) {
    // SWDE's crawler put a <base> to the real site before the doctype: pages resolve links against themselves here.
    const html = gunzipSync(readFileSync(path.join(dir, 'pages', `${id}.htm.gz`)))
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .replace(/<base\s[^>]*>/i, '');
    pages.set(pathOf(id), { path: pathOf(id), kind: 'book', html });
    truth.set(pathOf(id), truthById.get(id)!);
  }
  const train = order.slice(0, trainCount).map(pathOf);
  const test = order.slice(trainCount).map(pathOf);
  pages.set('/', {
    path: '/',
    kind: 'home',
    html: `<!doctype html><html><head><title>Books</title></head><body><h1>Books</h1><ul>${train.slice(0, 40).map((href) => `<li><a href="${href}">${href}</a></li>`).join('')}</ul></body></html>`,
  });
  const sitemap = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${train.map((href) => `<url><loc>http://${host}${href}</loc></url>`).join('')}</urlset>`;
  return {
    site: { host, pages, details: train, robots: `User-agent: *\nAllow: /\nSitemap: http://${host}/sitemap.xml\n`, sitemap },
    train,
    test,
    truth,
  };
}

/**
 * Native field → attribute, chosen on training pages only: for each attribute the field whose values
 * match SWDE's most often (the site's labels name fields, SWDE names attributes; README: map per site).
 */
export function mapFields(answers: ReadonlyArray<{ parsed: Record<string, unknown>; truth: Record<SwdeAttribute, string[]> }>): Partial<Record<SwdeAttribute, string>> {
  const mapping: Partial<Record<SwdeAttribute, string>> = {};
  for (const attribute of SWDE_ATTRIBUTES) {
    const hits = new Map<string, number>();
    for (const { parsed, truth } of answers) {
      for (const [name, value] of Object.entries(parsed)) if (matches(attribute, value, truth[attribute])) hits.set(name, (hits.get(name) ?? 0) + 1);
    }
    const best = [...hits].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
    if (best) mapping[attribute] = best[0];
  }
  return mapping;
}
