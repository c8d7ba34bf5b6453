/**
 * Main content (`main_content=true`): the page's article without its navigation, banners, share bars,
 * comments and "related" rails, as Markdown, plain text or HTML, with the title, byline and date the
 * page states. No model and no network: one parse, block scoring (score.ts) and boilerplate pruning
 * (prune.ts). When no block wins clearly (a listing, a home page), the whole page is returned.
 */
import { type HTMLElement, documentBase, documentParts, parseHtml, tagOf } from '../dom';
import { joinBlocks, renderBlocks } from '../markdown/blocks';
import { plainTextOf } from '../plaintext';
import { headlineOf } from './anchors';
import { type ArticleMetadata, articleMetadata } from './metadata';
import { cleanArticle, stripFurniture } from './prune';
import { scoreBlocks } from './score';
import { StatsCache } from './stats';

export type { ArticleMetadata } from './metadata';

export interface MainContent {
  /** The article (a detached container of its blocks), or the page's body when none was found. */
  content: HTMLElement;
  /** False when the whole page was returned because no block won clearly. */
  found: boolean;
  metadata: ArticleMetadata;
  /** What relative URLs resolve against. */
  base: string;
}

/** Below this many characters an extraction is retried with fewer rules (pages whose class words mislead). */
const RETRY_BELOW = 500;
/** Below this many characters no block won: the page is returned whole. */
const ARTICLE_MIN = 140;

interface Attempt {
  content: HTMLElement;
  chars: number;
  /** The article sits next to the page's headline. */
  anchored: boolean;
}

function attempt(body: HTMLElement, unlikely: boolean, weighClasses: boolean, title: string | null): Attempt | undefined {
  // Found before furniture goes: a headline in a `<header>` still marks where the article is.
  const headline = headlineOf(body, title);
  stripFurniture(body, { unlikely });
  const stats = new StatsCache();
  const scored = scoreBlocks(body, stats, { weighClasses, ...(headline ? { headline } : {}) });
  if (scored.blocks.length === 0) return undefined;
  let content: HTMLElement;
  if (scored.blocks.length === 1 && scored.blocks[0]) content = scored.blocks[0];
  else {
    content = new (body.constructor as typeof HTMLElement)('div', {}, '', null, [0, 0]);
    content.childNodes = scored.blocks;
    for (const block of scored.blocks) block.parentNode = content;
  }
  cleanArticle(content, stats, scored.scores);
  stats.invalidate(content);
  return { content, chars: stats.of(content).chars, anchored: scored.anchored === true };
}

export function findMainContent(html: string, url: string): MainContent {
  const root = parseHtml(html);
  const { head, body } = documentParts(root);
  const base = documentBase(root, url);
  const metadata = articleMetadata(root, head, body);
  // The first attempt works on this parse; retries and the fallback need the page as it was.
  let best = attempt(body, true, true, metadata.title);
  if (!best || best.chars < RETRY_BELOW) {
    for (const [unlikely, weigh] of [[false, true], [false, false]] as const) {
      const next = attempt(documentParts(parseHtml(html)).body, unlikely, weigh, metadata.title);
      // A short story next to its headline stays itself: a longer block elsewhere is a neighbour.
      if (next && (!best || (next.chars > best.chars && (next.anchored || !best.anchored)))) best = next;
      if (best && best.chars >= RETRY_BELOW) break;
    }
  }
  if (!best || best.chars < ARTICLE_MIN) return { content: documentParts(parseHtml(html)).body, found: false, metadata, base };
  return { content: best.content, found: true, metadata, base };
}

/** Front matter of the metadata the page states (YAML; values as JSON strings, which YAML reads). */
export function frontMatter(metadata: ArticleMetadata): string {
  const lines = ['---'];
  for (const key of ['title', 'byline', 'date'] as const) {
    const value = metadata[key];
    if (value !== null) lines.push(`${key}: ${JSON.stringify(value)}`);
  }
  lines.push('---');
  return lines.join('\n');
}

export interface MainContentOptions {
  /** Put the title, byline and date first, as front matter. */
  metadata?: boolean;
}

export type MainContentFormat = 'markdown' | 'plaintext' | 'html';

/** Metadata for HTML output: a `<head>` with the title, author and date as the page's own `<meta>` would say them. */
function htmlHead(metadata: ArticleMetadata): string {
  const escape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  const parts = ['<meta charset="utf-8">'];
  if (metadata.title !== null) parts.push(`<title>${escape(metadata.title)}</title>`);
  if (metadata.byline !== null) parts.push(`<meta name="author" content="${escape(metadata.byline)}">`);
  if (metadata.date !== null) parts.push(`<meta name="date" content="${escape(metadata.date)}">`);
  return `<head>${parts.join('')}</head>`;
}

/** The article in one of the text formats, the metadata first when asked (front matter; a `<head>` for HTML). */
export function renderMainContent(main: MainContent, format: MainContentFormat, options: MainContentOptions = {}): string {
  if (format === 'html') {
    const tag = tagOf(main.content);
    const inner = tag === 'body' || tag === 'div' ? main.content.innerHTML : main.content.outerHTML;
    const article = `<article>${inner}</article>`;
    return options.metadata ? `<!DOCTYPE html><html>${htmlHead(main.metadata)}<body>${article}</body></html>` : article;
  }
  const text = format === 'markdown' ? joinBlocks(renderBlocks(main.content, { base: main.base })) : plainTextOf(main.content);
  return options.metadata ? `${frontMatter(main.metadata)}\n\n${text}` : text;
}

export const mainContentMarkdown = (html: string, url: string, options: MainContentOptions = {}): string =>
  renderMainContent(findMainContent(html, url), 'markdown', options);

export const mainContentText = (html: string, url: string, options: MainContentOptions = {}): string =>
  renderMainContent(findMainContent(html, url), 'plaintext', options);
