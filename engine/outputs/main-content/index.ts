/**
 * Main content (`main_content=true`): the page's article without its navigation, banners, share bars,
 * comments and "related" rails, as Markdown, plain text or HTML, with the title, byline and date the
 * page states. No model and no network: one parse, block scoring (score.ts) and boilerplate pruning
 * (prune.ts). When no block wins clearly (a listing, a home page), the whole page is returned.
 */
import { type HTMLElement, documentBase, documentParts, parseHtml, tagOf, visibleText } from '../dom';
import { joinBlocks, renderBlocks } from '../markdown/blocks';
import { plainTextOf } from '../plaintext';
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
}

function attempt(body: HTMLElement, title: string | null, unlikely: boolean, weighClasses: boolean): Attempt | undefined {
  stripFurniture(body, { unlikely });
  const stats = new StatsCache();
  const scored = scoreBlocks(body, stats, { weighClasses });
  if (scored.blocks.length === 0) return undefined;
  let content: HTMLElement;
  if (scored.blocks.length === 1 && scored.blocks[0]) content = scored.blocks[0];
  else {
    content = new (body.constructor as typeof HTMLElement)('div', {}, '', null, [0, 0]);
    content.childNodes = scored.blocks;
    for (const block of scored.blocks) block.parentNode = content;
  }
  cleanArticle(content, stats, scored.scores);
  dropTitleHeading(content, title);
  stats.invalidate(content);
  return { content, chars: stats.of(content).chars };
}

const normalize = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** The headline repeated as the article's first heading: the title belongs to the metadata. */
function dropTitleHeading(content: HTMLElement, title: string | null): void {
  if (!title) return;
  const wanted = normalize(title);
  const heading = content.querySelector('h1, h2');
  if (!heading || !heading.parentNode) return;
  const text = normalize(visibleText(heading));
  if (text.length > 0 && (text === wanted || (text.length >= 15 && wanted.includes(text)))) heading.parentNode.removeChild(heading);
}

export function findMainContent(html: string, url: string): MainContent {
  const root = parseHtml(html);
  const { head, body } = documentParts(root);
  const base = documentBase(root, url);
  const metadata = articleMetadata(root, head, body);
  // The first attempt works on this parse; retries and the fallback need the page as it was.
  let best = attempt(body, metadata.title, true, true);
  if (!best || best.chars < RETRY_BELOW) {
    for (const [unlikely, weigh] of [[false, true], [false, false]] as const) {
      const next = attempt(documentParts(parseHtml(html)).body, metadata.title, unlikely, weigh);
      if (next && (!best || next.chars > best.chars)) best = next;
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

const withFrontMatter = (text: string, main: MainContent, options: MainContentOptions): string =>
  options.metadata ? `${frontMatter(main.metadata)}\n\n${text}` : text;

export function mainContentMarkdown(html: string, url: string, options: MainContentOptions = {}): string {
  const main = findMainContent(html, url);
  return withFrontMatter(joinBlocks(renderBlocks(main.content, { base: main.base })), main, options);
}

export function mainContentText(html: string, url: string, options: MainContentOptions = {}): string {
  const main = findMainContent(html, url);
  return withFrontMatter(plainTextOf(main.content), main, options);
}

/** The article as HTML (an `<article>` holding its blocks), for output without a response_type. */
export function mainContentHtml(html: string, url: string, options: MainContentOptions = {}): string {
  const main = findMainContent(html, url);
  const inner = tagOf(main.content) === 'body' || tagOf(main.content) === 'div' ? main.content.innerHTML : main.content.outerHTML;
  return withFrontMatter(`<article>${inner}</article>`, main, options);
}
