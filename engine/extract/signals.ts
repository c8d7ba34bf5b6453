/**
 * The evidence one page gives about its data, before any page is compared with another:
 * - label pairs: a value next to the site's own label (`dt`/`dd`, `th`/`td`, a label element followed by
 *   its value, `Label: value` in one element, an icon's `title` or `aria-label`), each with the anchor
 *   path of the element that holds it;
 * - structured data: JSON-LD flattened to dot paths, and embedded application state
 *   (`__NEXT_DATA__`, `application/json` scripts, `window.__STATE__ = {...}` assignments);
 * - the page's main heading.
 * Anchor paths name ancestors by tag, `id`, `itemprop` and the class tokens the caller says are stable
 * across the kind's pages, never by sibling position, so a fact moved within its block keeps its path.
 */
import { collapseWhitespace, isElement, NOISE_TAGS, parseHtml, type HTMLElement, type Node } from '../outputs/dom';
import { isSpace } from '../outputs/scan/rules';
import { isDecoy } from './decoys';
import { embeddedValues, jsonLdValues, type StructuredValue } from './structured';

export type { StructuredValue };

export interface LabelPair {
  /** The site's label as shown ("Living area"). */
  label: string;
  /** Native field name derived from the label (`living_area`). */
  name: string;
  value: string;
  /** How the value sits next to its label, so the runtime can find it again. */
  shape: 'dl' | 'table' | 'pair' | 'colon' | 'titled' | 'inline' | 'lead';
  /** Anchor steps from the outermost ancestor to the value's element. */
  path: string[];
}

export interface PageSignals {
  url: string;
  labels: LabelPair[];
  structured: StructuredValue[];
  title?: { value: string; path: string[] };
  /** Tag paths of depth 3 (the DOM signature used to recognise the page's kind). */
  shingles: Set<string>;
}

const MAX_LABEL_LENGTH = 40;
const MAX_VALUE_LENGTH = 300;
/** A label, its value and the decoys beside them (a former price, a monthly line). */
const MAX_PAIR_PARTS = 5;

/** `Living area` → `living_area`; diacritics folded; empty when nothing usable is left. */
export function fieldName(label: string): string {
  return label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
}

const clean = (text: string): string => collapseWhitespace(text).trim();

/** Text of an element as a reader sees it: noise elements (and those `skip` names) skipped, blocks separated by spaces. */
export function readText(node: Node, skip?: (el: HTMLElement) => boolean): string {
  const parts: string[] = [];
  const work: Node[] = [node];
  for (let current = work.pop(); current; current = work.pop()) {
    if (isElement(current)) {
      if (NOISE_TAGS.has(current.rawTagName ?? '')) continue;
      if (skip && current !== node && skip(current)) continue;
      for (let index = current.childNodes.length - 1; index >= 0; index--) work.push(current.childNodes[index] as Node);
      parts.push(' ');
    } else {
      parts.push(current.rawText.replace(/&nbsp;/g, ' '));
    }
  }
  return clean(decodeEntities(parts.join('')));
}

/**
 * The value a label owns in `el`: its text without the competing values inside it (a struck-through
 * former price, a monthly line, a parenthesised qualifier; see decoys.ts), unless nothing else is left.
 */
export function valueText(el: HTMLElement): string {
  const whole = readText(el);
  if (elementChildren(el).length === 0) return whole;
  const own = readText(el, (child) => isDecoy(child));
  return own.length > 0 ? own : whole;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const point = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(point) && point > 0 && point < 0x110000 ? String.fromCodePoint(point) : whole;
    }
    return ENTITIES[code.toLowerCase()] ?? whole;
  });
}

/** Class tokens that look generated (hashes, CSS-in-JS prefixes): never part of an anchor. */
export const looksGenerated = (token: string): boolean =>
  /^(css|sc|jsx|emotion|svelte)-/.test(token) || hashedSuffix(token) || (/\d/.test(token) && /[a-z]/i.test(token) && token.length >= 6);

const isClassChar = (code: number): boolean => (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || code === 0x2d;

/**
 * `__` then five or more of `[A-Za-z0-9_-]` to the end (`block__x1y2z`), by hand: the pattern
 * `/__[A-Za-z0-9_-]{5,}$/` rescans from every `__` of a long run of underscores (a page's class attribute).
 */
function hashedSuffix(token: string): boolean {
  let start = token.length;
  while (start > 0 && isClassChar(token.charCodeAt(start - 1))) start--;
  const underscores = token.indexOf('__', start);
  return underscores >= 0 && token.length - (underscores + 2) >= 5;
}

/** Which class tokens may name an element in an anchor (those stable across a kind's pages). */
export interface TokenFilter {
  has(token: string): boolean;
}

/** Every token that does not look generated: what one page alone can tell (discovery). */
export const ANY_TOKEN: TokenFilter = { has: () => true };

export function classTokens(el: HTMLElement): string[] {
  return (el.getAttribute('class') ?? '').split(/\s+/).filter((token) => token && !looksGenerated(token));
}

/** The anchor of one element: tag, then a stable id, itemprop or stable classes. */
export function anchorStep(el: HTMLElement, stable: TokenFilter): string {
  const tag = el.rawTagName ?? '';
  const id = el.getAttribute('id');
  if (id && !/\d{3,}/.test(id) && !looksGenerated(id)) return `${tag}#${id}`;
  const itemprop = el.getAttribute('itemprop');
  if (itemprop) return `${tag}[itemprop=${itemprop}]`;
  const classes = classTokens(el).filter((token) => stable.has(token)).sort();
  return classes.length > 0 ? `${tag}.${classes.join('.')}` : tag;
}

export function anchorOf(el: HTMLElement, stable: TokenFilter): string[] {
  const steps: string[] = [];
  for (let current: HTMLElement | null = el; current && current.rawTagName; current = current.parentNode) {
    if (current.rawTagName === 'html' || current.rawTagName === 'body') break;
    steps.push(anchorStep(current, stable));
  }
  return steps.reverse();
}

/** The last `length` steps of a path: the anchor a recipe stores (the shortest that is unique). */
export const anchorSuffix = (path: readonly string[], length: number): string => path.slice(-length).join('>');

/** Whether a path ends with a stored anchor. */
export function endsWithAnchor(path: readonly string[], anchor: string): boolean {
  const joined = path.join('>');
  return joined === anchor || joined.endsWith(`>${anchor}`);
}

export const elementChildren = (el: HTMLElement): HTMLElement[] => el.childNodes.filter(isElement).filter((child) => !NOISE_TAGS.has(child.rawTagName ?? ''));

const labelLike = (text: string): boolean =>
  text.length > 0 && text.length <= MAX_LABEL_LENGTH && /\p{L}/u.test(text) && !/\d{3,}/.test(text) && fieldName(text.replace(/:$/, '')).length > 0;

/** Labels a caller looks for (a recipe's), or every label (learning). */
export type LabelFilter = ReadonlySet<string> | undefined;

function pair(label: string, value: string, shape: LabelPair['shape'], holder: HTMLElement, stable: TokenFilter, wanted: LabelFilter): LabelPair | undefined {
  const bare = withoutEndColon(label).trim();
  // The anchor path is the costly part: only for labels the caller wants.
  if ((wanted && !wanted.has(bare)) || !labelLike(bare) || value.length === 0 || value.length > MAX_VALUE_LENGTH || value === bare) return undefined;
  return { label: bare, name: fieldName(bare), value, shape, path: anchorOf(holder, stable) };
}

function labelPairs(body: HTMLElement, stable: TokenFilter, wanted: LabelFilter): LabelPair[] {
  const found: LabelPair[] = [];
  const push = (candidate: LabelPair | undefined) => {
    if (candidate) found.push(candidate);
  };
  const work: HTMLElement[] = [body];
  for (let el = work.pop(); el; el = work.pop()) {
    const tag = el.rawTagName ?? '';
    if (NOISE_TAGS.has(tag)) continue;
    const children = elementChildren(el);
    if (tag === 'dl') {
      for (let index = 0; index < children.length - 1; index++) {
        const term = children[index]!;
        const definition = children[index + 1]!;
        if (term.rawTagName === 'dt' && definition.rawTagName === 'dd') push(pair(readText(term), valueText(definition), 'dl', definition, stable, wanted));
      }
    } else if (tag === 'tr' && children.length === 2) {
      const [head, cell] = children as [HTMLElement, HTMLElement];
      if (head.rawTagName === 'th' || (head.rawTagName === 'td' && cell.rawTagName === 'td')) push(pair(readText(head), valueText(cell), 'table', cell, stable, wanted));
    } else if (children.length >= 2 && !['dl', 'table', 'tbody', 'thead', 'tr', 'ul', 'ol'].includes(tag)) {
      // A label element and its value element; competing values beside them (a former price, a
      // monthly line) are not a third part of the pair but decoys of it.
      // Cheap tests first: a leaf label, no text of the holder's own, a handful of parts.
      const ownText = el.childNodes.filter((child) => !isElement(child)).map((child) => child.rawText).join('').trim();
      const leafLabel = ownText === '' && children.length <= MAX_PAIR_PARTS && elementChildren(children[0]!).length === 0;
      const parts = !leafLabel ? [] : children.length === 2 ? children : children.filter((child, index) => index === 0 || !isDecoy(child));
      // A link or a button is something to follow or press, not a label ("Share" beside "Print").
      if (parts.length === 2 && !ACTION_TAGS.has(parts[0]!.rawTagName ?? '') && inlineValue(parts[1]!)) {
        push(pair(readText(parts[0]!), valueText(parts[1]!), 'pair', parts[1]!, stable, wanted));
      }
    }
    if (children.length > 0 && !['dl', 'table', 'tbody', 'thead', 'tr', 'ul', 'ol', 'select'].includes(tag)) {
      for (const run of inlineRuns(el)) push(pair(run.label, run.value, 'inline', run.holder, stable, wanted));
      const lead = leadRun(el);
      if (lead) push(pair(lead.label, lead.value, 'lead', el, stable, wanted));
      const colon = lead ? undefined : colonRun(el);
      if (colon) push(pair(colon.label, colon.value, 'colon', el, stable, wanted));
    }
    // A leaf longer than a label and a value together holds no pair: its text is not even read.
    if (children.length === 0 && !['dd', 'td', 'th', 'dt'].includes(tag) && el.rawText.length <= 2 * (MAX_LABEL_LENGTH + MAX_VALUE_LENGTH)) {
      const text = readText(el);
      const colon = text.indexOf(':');
      if (colon > 0) push(pair(text.slice(0, colon), text.slice(colon + 1).trim(), 'colon', el, stable, wanted));
      const titled = el.getAttribute('title') ?? el.getAttribute('aria-label');
      if (titled && colon < 0) push(pair(titled, text, 'titled', el, stable, wanted));
    }
    for (let index = children.length - 1; index >= 0; index--) work.push(children[index]!);
  }
  return found;
}

const INLINE_LABEL_TAGS = new Set(['b', 'strong', 'label', 'em', 'span', 'th']);

/**
 * `<li><strong>Publisher</strong>: Mira Books</li>` and `<b>ISBN:</b> 978…<br><b>Date:</b> June 2010<br>`:
 * a bold (or labelled) element, a colon on either side of its end, and the text after it up to the
 * next line break or label. The colon is the evidence: a bold word inside prose has none.
 */
function inlineRuns(el: HTMLElement): Array<{ label: string; value: string; holder: HTMLElement }> {
  const runs: Array<{ label: string; value: string; holder: HTMLElement }> = [];
  const nodes = el.childNodes;
  for (let index = 0; index < nodes.length; index++) {
    const node = nodes[index]!;
    if (!isElement(node) || !INLINE_LABEL_TAGS.has(node.rawTagName ?? '') || elementChildren(node).length > 0) continue;
    const label = readText(node);
    const parts: string[] = [];
    let next = index + 1;
    for (; next < nodes.length; next++) {
      const after = nodes[next]!;
      if (isElement(after)) {
        const tag = after.rawTagName ?? '';
        if (tag === 'br' || BLOCKS.has(tag) || (INLINE_LABEL_TAGS.has(tag) && elementChildren(after).length === 0 && /:\s*$/.test(readText(after)))) break;
        parts.push(readText(after, (child) => isDecoy(child)));
      } else {
        parts.push(after.rawText);
      }
    }
    const text = clean(decodeEntities(parts.join(' ')));
    const colonAfter = text.startsWith(':');
    if (!(colonAfter || /:\s*$/.test(label)) || label.length === 0) continue;
    const value = text.replace(/^:\s*/, '').trim();
    if (value.length > 0) runs.push({ label: label.replace(/\s*:\s*$/, ''), value, holder: node });
    index = next - 1;
  }
  return runs;
}

const ACTION_TAGS: ReadonlySet<string> = new Set(['a', 'button']);

/**
 * Whether a pair's value element holds one value: text and inline elements (the amount in a
 * `<strong>`, a link, a badge beside it), no block of its own. Decoys inside it are left out of it.
 */
function inlineValue(el: HTMLElement): boolean {
  for (const child of elementChildren(el)) {
    if (isDecoy(child)) continue;
    if (BLOCKS.has(child.rawTagName ?? '') || elementChildren(child).some((inner) => !isDecoy(inner))) return false;
  }
  return true;
}

/**
 * `<li>Cuisine: <span>Italian</span></li>`, `<p>Calories: <span class="kcal">320 kcal</span></p>`: the
 * element's own text up to a colon is the label, and the inline content after it the value (decoys
 * such as a former price left out).
 */
function colonRun(el: HTMLElement): { label: string; value: string } | undefined {
  const nodes = el.childNodes.filter((node) => isElement(node) || node.rawText.trim() !== '');
  const first = nodes[0];
  if (!first || isElement(first) || nodes.length < 2) return undefined;
  const colon = first.rawText.indexOf(':');
  if (colon <= 0 || colon > 2 * MAX_LABEL_LENGTH || el.rawText.length > 2 * (MAX_LABEL_LENGTH + MAX_VALUE_LENGTH)) return undefined;
  const parts = [first.rawText.slice(colon + 1)];
  for (const node of nodes.slice(1)) {
    if (!isElement(node)) parts.push(node.rawText);
    else if (BLOCKS.has(node.rawTagName ?? '') || node.rawTagName === 'br') return undefined;
    else if (!isDecoy(node)) parts.push(readText(node, (child) => isDecoy(child)));
  }
  const value = clean(decodeEntities(parts.join(' ')));
  return value ? { label: clean(decodeEntities(first.rawText.slice(0, colon))), value } : undefined;
}

/**
 * Separators between links, with at most one conjunction (`, `, ` and `, ` & `). By hand: the pattern
 * `^[\s,;&|/]*(and|…)?[\s,;&|/]*$` tries every split of a long run of separators.
 */
function isLeadSeparator(text: string): boolean {
  const separator = (code: number): boolean => code === 0x2c || code === 0x3b || code === 0x26 || code === 0x7c || code === 0x2f || isSpace(code);
  let start = 0;
  let end = text.length;
  while (start < end && separator(text.charCodeAt(start))) start++;
  while (end > start && separator(text.charCodeAt(end - 1))) end--;
  return start === end || LEAD_CONJUNCTIONS.has(text.slice(start, end).toLowerCase());
}

const LEAD_CONJUNCTIONS = new Set(['and', 'und', 'et', 'y', 'e']);

/** Without a final colon and the whitespace around it (`Label :`); by hand, since `\s*:\s*$` is quadratic in a long run of whitespace. */
function withoutEndColon(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed.endsWith(':') ? trimmed.slice(0, -1).trimEnd() : text;
}

/**
 * `<h3>by <a>Emilie Richards</a></h3>`, `<p>Author: <a>A</a>, <a>B</a></p>`: a word or two of the
 * element's own text, then only links (and separators between them); the links are the value.
 */
function leadRun(el: HTMLElement): { label: string; value: string } | undefined {
  const nodes = el.childNodes.filter((node) => isElement(node) || node.rawText.trim() !== '');
  const first = nodes[0];
  if (!first || isElement(first) || nodes.length < 2) return undefined;
  const label = clean(decodeEntities(first.rawText)).replace(/\s*:$/, '');
  if (label.split(' ').length > 2 || !/^\p{L}+( \p{L}+)?$/u.test(label)) return undefined;
  const links: string[] = [];
  for (const node of nodes.slice(1)) {
    if (isElement(node)) {
      if (node.rawTagName !== 'a') return undefined;
      links.push(readText(node));
    } else if (!isLeadSeparator(node.rawText)) return undefined;
  }
  return links.length > 0 && links.every(Boolean) ? { label, value: links.join(', ') } : undefined;
}

const BLOCKS = new Set(['p', 'div', 'ul', 'ol', 'li', 'table', 'dl', 'section', 'article', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr']);

/** Tag paths of depth 3 under `body`, the subtrees in `skip` left out. */
export function tagShingles(body: HTMLElement, skip?: ReadonlySet<HTMLElement>): Set<string> {
  const shingles = new Set<string>();
  const work: Array<[HTMLElement, string[]]> = [[body, []]];
  for (let entry = work.pop(); entry; entry = work.pop()) {
    const [el, trail] = entry;
    for (const child of elementChildren(el)) {
      if (skip?.has(child)) continue;
      const next = [...trail.slice(-2), child.rawTagName ?? ''];
      shingles.add(next.join('>'));
      work.push([child, next]);
    }
  }
  return shingles;
}

/** Class tokens of a page (for the stable-token count across a kind's pages). */
export function pageClassTokens(html: string): Set<string> {
  const tokens = new Set<string>();
  for (const el of parseHtml(html).querySelectorAll('[class]')) for (const token of classTokens(el)) tokens.add(token);
  return tokens;
}

/** A parsed page, to compute several views of it without parsing it again. */
export const parsePage = (html: string): HTMLElement => parseHtml(html);

/**
 * What a recipe reads of a page, when it is known: only its labels, structured data only when it has
 * such sources, and no signature (recognising the page computed it already). Learning reads it all.
 */
export interface SignalNeeds {
  labels: ReadonlySet<string>;
  structured: boolean;
}

export function pageSignals(html: string | HTMLElement, url: string, stable: TokenFilter = new Set(), needs?: SignalNeeds): PageSignals {
  const root = typeof html === 'string' ? parseHtml(html) : html;
  const body = root.querySelector('body') ?? root;
  // The page's heading: its h1, or the first h2 of a page that has none (older templates).
  const heading = body.querySelector('h1') ?? body.querySelector('h2');
  const headingText = heading ? valueText(heading) : '';
  return {
    url,
    labels: needs && needs.labels.size === 0 ? [] : labelPairs(body, stable, needs?.labels),
    structured: needs && !needs.structured ? [] : [...jsonLdValues(root), ...embeddedValues(root)],
    ...(heading && headingText ? { title: { value: headingText, path: anchorOf(heading, stable) } } : {}),
    shingles: needs ? new Set() : tagShingles(body),
  };
}

/** The names of the labels a page shows (what tells two layouts of one kind of page to be one kind). */
export function pageLabels(root: HTMLElement): string[] {
  const body = root.querySelector('body') ?? root;
  return [...new Set(labelPairs(body, ANY_TOKEN, undefined).map((pair) => pair.name))].sort();
}

/** Only the DOM signature of a page (what recognising its kind needs). */
export function pageShingles(root: HTMLElement): Set<string> {
  return tagShingles(root.querySelector('body') ?? root);
}
