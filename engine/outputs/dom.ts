/**
 * What every output conversion shares: one way to parse a page, the list of elements that are never
 * content, visibility, and URL resolution against the page (honouring `<base href>`).
 */
import { type HTMLElement, type Node, NodeType, parse } from 'node-html-parser';
import { DEFAULT_PARSE_CAPS, HtmlRefused, type ParseCaps } from './limits';
import { scanHtml } from './scan';

export { type HTMLElement, type Node, NodeType };

/**
 * Nesting deeper than this is flattened, as browsers do (Blink stops nesting at 512): every walk over
 * the tree can then recurse without a hostile page exhausting the stack.
 */
export const MAX_DEPTH = 400;

/** The caps `parseHtml` enforces now: the process's (the defaults, or its configuration's), or what the running output was given. */
let caps: Readonly<ParseCaps> = DEFAULT_PARSE_CAPS;

/** The process's parse caps, for every parse outside an output task (a crawl page's links, Extract's preparation); set once by the FetchService. */
export function configureParseCaps(given: Readonly<ParseCaps>): void {
  caps = given;
}

/** A page an output task has scanned already, and the page as the scan left it for the parser. */
let scanned: { page: string; html: string } | undefined;

/**
 * Runs `work` with `given` as the parse caps, and with `page` already scanned (to `html`) when the
 * caller scanned it: the output's own parses of it (main content reads a page up to three times) then
 * skip the scan. Work is synchronous, so nothing else parses meanwhile.
 */
export function withParseCaps<T>(given: Readonly<ParseCaps>, work: () => T, prescan?: { page: string; html: string }): T {
  const before = { caps, scanned };
  caps = given;
  scanned = prescan;
  try {
    return work();
  } finally {
    ({ caps, scanned } = before);
  }
}

/**
 * Parses a page, or throws HtmlRefused when it goes past a parse cap. The pre-scan (scan/) runs first,
 * in linear time, and hands the parser the page with tag names in lower case (the parser's own
 * lowercasing rescans the whole page for every script) and script, style, noscript and textarea end
 * tags spelled as it looks for them. Their bodies stay raw text, so markup-like strings in them never
 * become elements.
 */
export function parseHtml(html: string): HTMLElement {
  let source: string;
  if (scanned !== undefined && scanned.page === html) source = scanned.html;
  else {
    const scan = scanHtml(html, caps);
    if (!scan.ok) throw new HtmlRefused(scan.cap, scan.limit);
    source = scan.html;
  }
  const root = parse(source, {
    lowerCaseTagName: false,
    comment: false,
    blockTextElements: { script: true, style: true, noscript: true, textarea: true },
  });
  capDepth(root);
  return root;
}

function capDepth(root: HTMLElement): void {
  const stack: [HTMLElement, number][] = [[root, 0]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [el, depth] = entry;
    for (const child of el.childNodes) {
      if (!isElement(child)) continue;
      if (depth + 1 < MAX_DEPTH) stack.push([child, depth + 1]);
      else flatten(child);
    }
  }
}

/** Replaces an element's subtree by the text it holds, in order, without recursion. */
function flatten(el: HTMLElement): void {
  const texts: Node[] = [];
  const work: Node[] = el.childNodes.slice().reverse();
  for (let node = work.pop(); node; node = work.pop()) {
    if (node.nodeType === NodeType.TEXT_NODE) texts.push(node);
    else if (isElement(node) && !NOISE_TAGS.has(tagOf(node))) {
      for (let i = node.childNodes.length - 1; i >= 0; i--) work.push(node.childNodes[i] as Node);
    }
  }
  for (const text of texts) text.parentNode = el;
  el.childNodes = texts;
}

/** Elements whose content is never readable page text. */
export const NOISE_TAGS: ReadonlySet<string> = new Set([
  'head', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'canvas', 'iframe', 'frame', 'frameset',
  'object', 'embed', 'param', 'source', 'track', 'map', 'area', 'link', 'meta', 'base', 'title',
  'button', 'select', 'option', 'optgroup', 'datalist', 'textarea', 'input', 'output', 'portal',
]);

/** Elements that start a new block in rendered text; anything else flows inline. */
export const BLOCK_TAGS: ReadonlySet<string> = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'center', 'dd', 'details', 'dialog', 'dir', 'div', 'dl',
  'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header',
  'hgroup', 'hr', 'html', 'legend', 'li', 'listing', 'main', 'menu', 'nav', 'ol', 'p', 'pre', 'search', 'section',
  'summary', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'caption', 'audio', 'video', 'xmp',
]);

/** Media players: what they contain is fallback for browsers without media support, not page text. */
export const MEDIA_TAGS: ReadonlySet<string> = new Set(['audio', 'video']);

const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i;

export const tagOf = (node: Node): string => (node.nodeType === NodeType.ELEMENT_NODE ? ((node as HTMLElement).rawTagName ?? '') : '');

export const isElement = (node: Node): node is HTMLElement => node.nodeType === NodeType.ELEMENT_NODE;

/** Hidden by the page itself: such elements are not shown to a reader, so no output includes them. */
export function isHidden(el: HTMLElement): boolean {
  if (el.rawTagName === 'dialog') return !el.hasAttribute('open'); // a closed dialog is not displayed
  // Most elements have none of the attributes involved; skip parsing their attributes at all.
  if (!/hidden|style/i.test(el.rawAttrs)) return false;
  if (el.hasAttribute('hidden')) return true;
  if (el.getAttribute('aria-hidden') === 'true') return true;
  const style = el.getAttribute('style');
  return style !== undefined && HIDDEN_STYLE.test(style);
}

/** A direct child element by tag name. */
const childByTag = (parent: HTMLElement | undefined, tag: string): HTMLElement | undefined =>
  parent?.childNodes.find((child): child is HTMLElement => isElement(child) && child.rawTagName === tag);

/** `<head>` and `<body>` where a parsed document puts them (under `<html>`), without walking the whole tree. */
export function documentParts(root: HTMLElement): { head: HTMLElement | undefined; body: HTMLElement } {
  const html = childByTag(root, 'html') ?? root;
  return { head: childByTag(html, 'head'), body: childByTag(html, 'body') ?? html };
}

/** The URL relative references resolve against: `<base href>` when the page sets one, else the page URL. */
export function documentBase(root: HTMLElement, pageUrl: string): string {
  const head = documentParts(root).head;
  const href = (head ?? root).querySelector('base[href]')?.getAttribute('href');
  if (href) {
    const resolved = resolveUrl(href, pageUrl);
    if (resolved) return resolved;
  }
  return pageUrl;
}

/** Absolute form of a URL attribute; undefined when empty, unparsable or a `javascript:` pseudo-link. */
export function resolveUrl(value: string | undefined, base: string): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed || /^javascript:/i.test(trimmed)) return undefined;
  try {
    return new URL(trimmed, base).href;
  } catch {
    return undefined;
  }
}

/** Picks the largest candidate of a `srcset` (by width or density descriptor). */
export function largestSrcset(srcset: string | undefined): string | undefined {
  if (!srcset) return undefined;
  let best: string | undefined;
  let bestSize = -1;
  for (const part of srcset.split(/,\s+/)) {
    const [url, descriptor] = part.trim().split(/\s+/);
    if (!url) continue;
    const size = descriptor ? parseFloat(descriptor) : 1;
    if (size > bestSize) {
      best = url;
      bestSize = Number.isNaN(size) ? 0 : size;
    }
  }
  return best;
}

/** The image URL a browser would eventually show, looking through the usual lazy-loading attributes. */
export function imageSource(img: HTMLElement): string | undefined {
  const src = img.getAttribute('src');
  if (src && !src.startsWith('data:')) return src;
  for (const name of ['data-src', 'data-lazy-src', 'data-original', 'data-url']) {
    const value = img.getAttribute(name);
    if (value && !value.startsWith('data:')) return value;
  }
  return largestSrcset(img.getAttribute('srcset') ?? img.getAttribute('data-srcset'));
}

/** Collapses HTML whitespace the way a browser lays out normal text. */
export const collapseWhitespace = (text: string): string => text.replace(/[\s\u00a0]+/g, ' ');

export interface TextOptions {
  /** Tags whose content is left out, on top of noise and hidden elements. */
  skip?: ReadonlySet<string>;
  /** Put block boundaries on separate lines instead of joining everything into one line. */
  lines?: boolean;
}

/** Visible text of an element, whitespace collapsed, noise, media fallbacks and hidden parts left out. */
export function visibleText(node: Node, options: TextOptions = {}): string {
  const parts: string[] = [];
  const separator = options.lines ? '\n' : ' ';
  const walk = (current: Node): void => {
    for (const child of current.childNodes) {
      if (child.nodeType === NodeType.TEXT_NODE) parts.push(collapseWhitespace(child.text));
      else if (isElement(child)) {
        const tag = tagOf(child);
        if (NOISE_TAGS.has(tag) || MEDIA_TAGS.has(tag) || options.skip?.has(tag) || isHidden(child)) continue;
        const block = BLOCK_TAGS.has(tag) || tag === 'br';
        if (block) parts.push(separator);
        walk(child);
        if (block) parts.push(separator);
      }
    }
  };
  walk(node);
  const text = parts.join('');
  // Runs of spaces first: ` *\n` would try every space of a long run that no newline ends (quadratic).
  return options.lines ? text.replace(/ {2,}/g, ' ').replace(/ ?\n[\n ]*/g, '\n').trim() : collapseWhitespace(text).trim();
}
