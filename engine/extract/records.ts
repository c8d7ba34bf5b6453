/**
 * List pages (search results, category listings): a region of repeated records, found the way MDR
 * finds data regions, simplified: children of one element that share their tag and classes, at least
 * three, each holding a link, alike in the tag paths below them; rows of a grid holding a few records
 * each are one region. Side blocks (header, footer, nav, aside) are never the page's list, and a page
 * is a list page only when its records outweigh its own prose, so a detail page's "similar listings",
 * even inside its main element, do not make it a list page.
 *
 * A record's values are keyed by where they sit inside the record (the steps from the record down,
 * by tag and stable classes, never by position, but for siblings of one step: the cells of a table
 * row by their column) and how they are read (text, link, image, the value after a "Label:"), so the
 * same key finds the same value in every record of the list.
 */
import { collapseWhitespace, isElement, NOISE_TAGS, type HTMLElement } from '../outputs/dom';
import { ANY_TOKEN, anchorOf, anchorStep, classTokens, elementChildren, readText, tagShingles, type TokenFilter } from './signals';

export const SIDE_TAGS: ReadonlySet<string> = new Set(['header', 'footer', 'nav', 'aside']);

export const MIN_RECORDS = 3;
/** A record is like its siblings when it shares this much of their common tag paths. */
const RECORD_LIKENESS = 0.5;
/** Share of the page's main text the records must hold for the page to be a list page. */
const LIST_TEXT_SHARE = 0.4;
const RELATIVE_DEPTH = 4;

export interface Region {
  /** The element whose children are the records (the first row of a grid). */
  container: HTMLElement;
  /** Every element holding records: the container, or each row of a grid. */
  containers: HTMLElement[];
  /** The step (tag and stable classes) every record matches. */
  step: string;
  records: HTMLElement[];
  /** Every child of the container that matches the step (records unlike the rest included). */
  members: HTMLElement[];
  /** Characters of text the records hold. */
  text: number;
}

/** Characters of readable text under `el`, side blocks excluded when `main` is set. */
export function textLength(el: HTMLElement, main = false): number {
  let length = 0;
  const work: HTMLElement[] = [el];
  for (let current = work.pop(); current; current = work.pop()) {
    for (const child of current.childNodes) {
      if (isElement(child)) {
        const tag = child.rawTagName ?? '';
        if (!NOISE_TAGS.has(tag) && !(main && SIDE_TAGS.has(tag))) work.push(child);
      } else {
        length += collapseWhitespace(child.rawText).trim().length;
      }
    }
  }
  return length;
}

/** Tag paths below an element, a few levels deep: the shape records of one list share. */
function shapeOf(el: HTMLElement): Set<string> {
  const paths = new Set<string>();
  const work: Array<[HTMLElement, string, number]> = [[el, '', 0]];
  for (let entry = work.pop(); entry; entry = work.pop()) {
    const [current, path, depth] = entry;
    if (depth >= RELATIVE_DEPTH) continue;
    for (const child of elementChildren(current)) {
      const next = `${path}>${child.rawTagName ?? ''}`;
      paths.add(next);
      work.push([child, next, depth + 1]);
    }
  }
  return paths;
}

const hasLink = (el: HTMLElement): boolean => (el.rawTagName === 'a' && el.getAttribute('href') !== undefined) || el.querySelector('a[href]') !== null;

/** Repeated-record regions of a page outside its side blocks. */
export function recordRegions(body: HTMLElement, stable: TokenFilter): Region[] {
  const regions: Region[] = [];
  const work: HTMLElement[] = [body];
  for (let el = work.pop(); el; el = work.pop()) {
    const children = elementChildren(el).filter((child) => !SIDE_TAGS.has(child.rawTagName ?? ''));
    if (children.length >= MIN_RECORDS) {
      const bySteps = new Map<string, HTMLElement[]>();
      for (const child of children) {
        const step = anchorStep(child, stable);
        bySteps.set(step, [...(bySteps.get(step) ?? []), child]);
      }
      for (const [step, members] of bySteps) {
        if (members.length < MIN_RECORDS || !members.every(hasLink)) continue;
        const shapes = members.map(shapeOf);
        const counts = new Map<string, number>();
        for (const shape of shapes) for (const path of shape) counts.set(path, (counts.get(path) ?? 0) + 1);
        const common = new Set([...counts].filter(([, count]) => count * 2 >= members.length).map(([path]) => path));
        const records = members.filter((_, index) => likeness(shapes[index]!, common) >= RECORD_LIKENESS);
        if (records.length >= MIN_RECORDS) regions.push({ container: el, containers: [el], step, records, members, text: records.reduce((sum, record) => sum + textLength(record), 0) });
      }
    }
    for (const child of children) work.push(child);
  }
  return gridsOf(regions, stable);
}

/**
 * Records laid out in rows (a grid of cards three to a row): the rows are siblings of one step, each
 * holding a few records; together they are one region, its last short row included.
 */
function gridsOf(regions: readonly Region[], stable: TokenFilter): Region[] {
  const out: Region[] = [];
  const merged = new Set<string>();
  const rowsOf = new Map<HTMLElement, string>();
  for (const region of regions) {
    const parent = region.container.parentNode;
    const rowStep = anchorStep(region.container, stable);
    const rows = parent ? elementChildren(parent).filter((row) => anchorStep(row, stable) === rowStep) : [];
    if (!parent || rows.length < 2) {
      out.push(region);
      continue;
    }
    let id = rowsOf.get(parent);
    if (id === undefined) rowsOf.set(parent, (id = String(rowsOf.size)));
    const key = `${id}|${rowStep}|${region.step}`;
    if (merged.has(key)) continue;
    merged.add(key);
    const members = rows.flatMap((row) => elementChildren(row).filter((child) => anchorStep(child, stable) === region.step));
    const records = members.filter(hasLink);
    out.push({ container: rows[0]!, containers: rows, step: region.step, records, members, text: records.reduce((sum, record) => sum + textLength(record), 0) });
  }
  return out;
}

function likeness(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let both = 0;
  for (const path of a) if (b.has(path)) both++;
  return both / (a.size + b.size - both);
}

/** The page's list: its largest region, when it holds most of the page's main text. */
export function mainRegion(body: HTMLElement, stable: TokenFilter): Region | undefined {
  const regions = recordRegions(body, stable);
  let best: Region | undefined;
  for (const region of regions) if (!best || region.text > best.text) best = region;
  if (!best) return undefined;
  const main = textLength(body, true);
  return main > 0 && best.text / main >= LIST_TEXT_SHARE ? best : undefined;
}

/**
 * Characters of the page's own prose: main text that is neither in `records` nor in a link (a list
 * page's filters and pager are links; a detail page's description, facts and labels are not).
 */
function proseOutside(body: HTMLElement, records: ReadonlySet<HTMLElement>): number {
  let length = 0;
  const work: Array<[HTMLElement, boolean]> = [[body, false]];
  for (let entry = work.pop(); entry; entry = work.pop()) {
    const [el, linked] = entry;
    for (const child of el.childNodes) {
      if (isElement(child)) {
        const tag = child.rawTagName ?? '';
        if (!NOISE_TAGS.has(tag) && !SIDE_TAGS.has(tag) && !records.has(child)) work.push([child, linked || tag === 'a']);
      } else if (!linked) {
        length += collapseWhitespace(child.rawText).trim().length;
      }
    }
  }
  return length;
}

/** Records of a list page hold at least this multiple of the prose the page has besides them. */
const LIST_OVER_PROSE = 2;

/**
 * Whether a page is a list page (search results, a category): its main region of records, and the
 * records outweigh the page's own prose. A detail page with a long rail of related records ("customers
 * also bought") still has its description and facts as prose of its own: it stays a detail page.
 */
export function listRegion(body: HTMLElement, stable: TokenFilter): Region | undefined {
  const region = mainRegion(body, stable);
  if (!region) return undefined;
  return region.text >= LIST_OVER_PROSE * proseOutside(body, new Set(region.records)) ? region : undefined;
}

export interface RecordValue {
  /** How the value is read. */
  take: 'text' | 'own' | 'href' | 'src' | 'label';
  /** Steps from the record down to the element holding the value (`''`: the record itself). */
  path: string;
  /** For `label`: the text before the colon, as the site writes it. */
  label?: string;
  value: string;
  /** Class tokens and itemprop of the element, for naming the field. */
  classes: string[];
  itemprop?: string;
  tag: string;
  /** In a table row, the column of the cell the value is in (1 for the first). */
  column?: number;
}

export const recordKey = (value: Pick<RecordValue, 'take' | 'path' | 'label'>): string => `${value.take}|${value.path}|${value.label ?? ''}`;

const MAX_LABEL = 40;
const MAX_VALUE = 300;

/**
 * The steps of a record's children: tag and stable classes, and when siblings share that, their rank
 * among those siblings (`td:2`): the cells of a table row are told apart by their column.
 */
function childSteps(children: readonly HTMLElement[], stable: TokenFilter): Array<[HTMLElement, string]> {
  const steps = children.map((child) => anchorStep(child, stable));
  const counts = new Map<string, number>();
  for (const step of steps) counts.set(step, (counts.get(step) ?? 0) + 1);
  const seen = new Map<string, number>();
  return children.map((child, index) => {
    const step = steps[index]!;
    if (counts.get(step)! < 2) return [child, step];
    const rank = (seen.get(step) ?? 0) + 1;
    seen.set(step, rank);
    return [child, `${step}:${rank}`];
  });
}

/** Column names of a table whose rows are records: its header cells, by column (1 for the first). */
export function columnNames(record: HTMLElement): Map<number, string> {
  const names = new Map<number, string>();
  let table: HTMLElement | null = record.parentNode;
  while (table && table.rawTagName !== 'table') table = table.parentNode;
  if (!table || record.rawTagName !== 'tr') return names;
  const header = table.querySelector('thead tr') ?? table.querySelectorAll('tr').find((row) => elementChildren(row).length > 0 && elementChildren(row).every((cell) => cell.rawTagName === 'th'));
  if (!header) return names;
  elementChildren(header).forEach((cell, index) => {
    const text = readText(cell);
    if (text && text.length <= MAX_LABEL) names.set(index + 1, text);
  });
  return names;
}

/** Every value of one record, keyed; a key met twice in the record is ambiguous and left out. */
export function recordValues(record: HTMLElement, stable: TokenFilter): Map<string, RecordValue> {
  const found = new Map<string, RecordValue | null>();
  const add = (value: RecordValue) => {
    const key = recordKey(value);
    found.set(key, found.has(key) ? null : value);
  };
  // The column (1 for the first) of each value under a table row's cell.
  const work: Array<[HTMLElement, string, number | undefined]> = [[record, '', undefined]];
  for (let entry = work.pop(); entry; entry = work.pop()) {
    const [el, path, column] = entry;
    const tag = el.rawTagName ?? '';
    const meta = { classes: classTokens(el), ...(el.getAttribute('itemprop') ? { itemprop: el.getAttribute('itemprop') } : {}), tag, ...(column !== undefined ? { column } : {}) };
    const href = tag === 'a' ? el.getAttribute('href') : undefined;
    if (href && !/^\s*(#|javascript:|mailto:|tel:)/i.test(href)) add({ take: 'href', path, value: href.trim(), ...meta });
    const src = tag === 'img' ? el.getAttribute('src') : undefined;
    if (src) add({ take: 'src', path, value: src.trim(), ...meta });
    const children = elementChildren(el);
    if (children.length === 0) {
      const text = el.rawText.length <= 2 * (MAX_LABEL + MAX_VALUE) ? readText(el) : '';
      const colon = text.indexOf(':');
      if (colon > 0 && colon <= MAX_LABEL && /\p{L}/u.test(text.slice(0, colon)) && text.slice(colon + 1).trim()) {
        add({ take: 'label', path, label: text.slice(0, colon).trim(), value: text.slice(colon + 1).trim(), ...meta });
      } else if (text && text.length <= MAX_VALUE) {
        add({ take: 'text', path, value: text, ...meta });
      }
    } else {
      const own = collapseWhitespace(el.childNodes.filter((child) => !isElement(child)).map((child) => child.rawText).join(' ')).trim();
      if (own && own.length <= MAX_VALUE && /[\p{L}\p{N}]/u.test(own)) add({ take: 'own', path, value: own, ...meta });
    }
    const steps = childSteps(children, stable);
    for (let index = steps.length - 1; index >= 0; index--) {
      const [child, step] = steps[index]!;
      work.push([child, path ? `${path}>${step}` : step, el === record && tag === 'tr' ? index + 1 : column]);
    }
  }
  const values = new Map<string, RecordValue>();
  for (const [key, value] of found) if (value) values.set(key, value);
  return values;
}

/** Records of a page under a stored container anchor and record step, in document order. */
export function recordsAt(body: HTMLElement, container: string, step: string, stable: TokenFilter): HTMLElement[] {
  const tag = step.split(/[.#[]/, 1)[0] ?? '';
  const records: HTMLElement[] = [];
  const work: HTMLElement[] = [body];
  for (let el = work.pop(); el; el = work.pop()) {
    const children = elementChildren(el);
    const matching = children.filter((child) => child.rawTagName === tag && anchorStep(child, stable) === step);
    if (matching.length > 0) {
      const path = anchorOf(el, stable).join('>');
      if (path === container || path.endsWith(`>${container}`)) records.push(...matching);
    }
    for (let index = children.length - 1; index >= 0; index--) work.push(children[index]!);
  }
  return records;
}

/** The page's "next page" link (`rel=next`), if it has one. */
export function nextPageHref(root: HTMLElement): string | undefined {
  for (const link of root.querySelectorAll('a[rel], link[rel]')) {
    if ((link.getAttribute('rel') ?? '').toLowerCase().split(/\s+/).includes('next')) {
      const href = link.getAttribute('href');
      if (href) return href.trim();
    }
  }
  return undefined;
}

/** A detail kind's signature smaller than this once its records are left out keeps them (too little else to tell it by). */
const MIN_TEMPLATE_SHINGLES = 8;

/**
 * The tag paths of a detail page without its runs of repeated records ("similar listings", "customers
 * also bought"): rails come and go from page to page of one kind, so a kind is recognised by the rest
 * of its template. A page that is little besides its records keeps them.
 */
export function templateShingles(root: HTMLElement): Set<string> {
  const body = root.querySelector('body') ?? root;
  const records = new Set(recordRegions(body, ANY_TOKEN).flatMap((region) => region.members));
  const bare = tagShingles(body, records);
  return bare.size >= MIN_TEMPLATE_SHINGLES || records.size === 0 ? bare : tagShingles(body);
}
