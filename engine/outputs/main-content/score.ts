/**
 * Block scoring: every paragraph-like block (a `<p>`, `<pre>`, `<td>`, or a container's own run of
 * inline text) gives points for its length and commas to its parent, less to its grandparent and
 * further ancestors. A candidate's score starts from its tag, class/id words and the page's structured
 * hints, and is scaled down by its link density. The best candidate, widened to an ancestor when the
 * top blocks share one, and joined by siblings that score close to it, is the article.
 */
import { type HTMLElement, NodeType, isElement, tagOf } from '../dom';
import { besideHeadline, isTeaser, nextToHeadline, partsAncestor } from './anchors';
import { ARTICLE_BODY_HINT, classWeight, structuredHint, tagWeight } from './signals';
import type { StatsCache } from './stats';

/** Leaf blocks of prose: they credit their parent and ancestors. */
const PARAGRAPH_TAGS: ReadonlySet<string> = new Set(['p', 'pre', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Containers whose own text (not in a child block) forms a paragraph of theirs. */
const CONTAINER_TAGS: ReadonlySet<string> = new Set(['div', 'section', 'article', 'main', 'span', 'font', 'center', 'body']);
const INLINE_BLOCK_BREAKERS: ReadonlySet<string> = new Set([
  'address', 'article', 'aside', 'blockquote', 'dd', 'div', 'dl', 'dt', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul', 'tr', 'td', 'tbody', 'thead',
]);
const MIN_PARAGRAPH = 25;
/** What a teaser's summary paragraph counts for, against a paragraph of prose. */
const TEASER_CREDIT = 0.25;
const ANCESTOR_LEVELS = 5;
/** A second block scoring this share of the best one, within this many levels of it, is another part of the article. */
const SPLIT_PART = 0.6;
const SPLIT_LEVELS = 3;

export interface Scored {
  scores: Map<HTMLElement, number>;
  /** The article's blocks, in page order; empty when nothing scored. */
  blocks: HTMLElement[];
  top?: HTMLElement;
  topScore: number;
  /** The article is the one next to the page's headline. */
  anchored?: boolean;
}

export interface ScoreOptions {
  /** Weigh class/id words (off in the last retry). */
  weighClasses: boolean;
  /** The page's headline (anchors.ts): the article is the prose next to it. */
  headline?: HTMLElement;
}

/** Characters of an element's own inline text, outside its block children. */
function ownInlineChars(el: HTMLElement, stats: StatsCache): { chars: number; commas: number } {
  let chars = 0;
  let commas = 0;
  for (const child of el.childNodes) {
    if (child.nodeType === NodeType.TEXT_NODE) {
      const text = child.rawText.trim();
      chars += text.length;
      commas += text.split(',').length - 1;
    } else if (isElement(child) && !INLINE_BLOCK_BREAKERS.has(tagOf(child))) {
      const inner = stats.of(child);
      // Link runs inside a container are navigation more often than prose.
      if (tagOf(child) !== 'a') {
        chars += inner.chars;
        commas += inner.commas;
      }
    }
  }
  return { chars, commas };
}

export function scoreBlocks(body: HTMLElement, stats: StatsCache, options: ScoreOptions): Scored {
  const scores = new Map<HTMLElement, number>();
  const initial = (el: HTMLElement): number => {
    const tag = tagOf(el);
    return tagWeight(tag) + structuredHint(el, tag) + (options.weighClasses ? classWeight(el) : 0);
  };
  // Points each candidate got from teasers' summaries and from prose: a candidate made mostly of
  // teasers is a rail of other stories, never another part of the article.
  const teaserPoints = new Map<HTMLElement, number>();
  const prosePoints = new Map<HTMLElement, number>();
  const credit = (paragraph: HTMLElement, points: number, selfIsParent: boolean, teaser = false): void => {
    let node: HTMLElement | null = selfIsParent ? paragraph : paragraph.parentNode;
    for (let level = 0; node && level < ANCESTOR_LEVELS; level++, node = node.parentNode) {
      if (tagOf(node) === '' || tagOf(node) === 'html') break;
      const divider = level === 0 ? 1 : level === 1 ? 2 : level * 3;
      scores.set(node, (scores.get(node) ?? initial(node)) + points / divider);
      const tally = teaser ? teaserPoints : prosePoints;
      tally.set(node, (tally.get(node) ?? 0) + points / divider);
    }
  };

  const stack: HTMLElement[] = [body];
  for (let el = stack.pop(); el; el = stack.pop()) {
    const tag = tagOf(el);
    if (PARAGRAPH_TAGS.has(tag)) {
      const { chars, commas } = stats.of(el);
      // A teaser's summary (under a linked headline) is another story's, not prose of this page.
      const teaser = tag === 'p' && isTeaser(el, stats);
      if (chars >= MIN_PARAGRAPH) credit(el, (teaser ? TEASER_CREDIT : 1) * (1 + commas + Math.min(Math.floor(chars / 100), 3)), false, teaser);
      continue;
    }
    // A cell's own text is a paragraph of its row; a container's own text, a paragraph of the container.
    if (tag === 'td' || CONTAINER_TAGS.has(tag)) {
      const own = ownInlineChars(el, stats);
      if (own.chars >= MIN_PARAGRAPH) credit(el, 1 + own.commas + Math.min(Math.floor(own.chars / 100), 3), tag !== 'td');
    }
    for (const child of el.childNodes) if (isElement(child)) stack.push(child);
  }

  let top: HTMLElement | undefined;
  let topScore = 0;
  const ranked: [HTMLElement, number][] = [];
  for (const [el, raw] of scores) {
    const score = raw * (1 - stats.linkDensity(el));
    scores.set(el, score);
    ranked.push([el, score]);
    if (score > topScore) {
      top = el;
      topScore = score;
    }
  }
  if (!top) return { scores, blocks: [], topScore: 0 };
  ranked.sort((a, b) => b[1] - a[1]);
  // A longer block away from the headline (a rail of teasers, the next article) is a neighbour.
  const near = besideHeadline(options.headline, top, ranked, (el) => prosePoints.get(el) ?? 0, stats);
  const fence = near ? top : undefined;
  if (near) {
    top = near;
    topScore = scores.get(near) ?? topScore;
  }
  const rail = (el: HTMLElement): boolean => (teaserPoints.get(el) ?? 0) > (prosePoints.get(el) ?? 0);
  top = widen(top, topScore, ranked, scores, fence, rail);
  // A body split around mid-article asides is every part of it.
  top = partsAncestor(top, stats, fence) ?? top;
  topScore = scores.get(top) ?? topScore;
  return { scores, blocks: withSiblings(top, topScore, scores, stats, fence), top, topScore, anchored: nextToHeadline(options.headline, top) };
}

/**
 * Moves up to a common ancestor of several strong candidates, or to a parent that scores as well; never
 * to one holding `fence` (a longer block the headline showed to be a neighbour of the article), and
 * never for a `rail` of teasers.
 */
function widen(top: HTMLElement, topScore: number, ranked: [HTMLElement, number][], scores: Map<HTMLElement, number>, fence?: HTMLElement, rail: (el: HTMLElement) => boolean = () => false): HTMLElement {
  const open = (el: HTMLElement): boolean => tagOf(el) !== 'body' && tagOf(el) !== 'html' && !(fence && (contains(el, fence) || contains(fence, el)));
  const strong = ranked
    .filter(([el]) => el !== top && open(el) && !rail(el))
    .slice(0, 4)
    .filter(([, score]) => score >= topScore * 0.75)
    .map(([el]) => el);
  if (strong.length >= 3) {
    for (let parent = top.parentNode; parent && open(parent); parent = parent.parentNode) {
      let contained = 0;
      for (const el of strong) if (contains(parent, el)) contained++;
      if (contained >= 3) {
        top = parent;
        break;
      }
    }
  }
  // An article split into parts (one block per chunk) has parts scoring nearly as high close by.
  for (const [el, score] of ranked) {
    if (score < topScore * SPLIT_PART) break;
    if (el === top || contains(top, el) || contains(el, top) || !open(el) || rail(el)) continue;
    let ancestor: HTMLElement | null = top.parentNode;
    for (let level = 1; ancestor && level <= SPLIT_LEVELS && !contains(ancestor, el); level++) ancestor = ancestor.parentNode;
    if (ancestor && contains(ancestor, el) && open(ancestor)) top = ancestor;
    break;
  }
  // A parent scoring higher than the candidate holds more of the article.
  let last = scores.get(top) ?? topScore;
  const threshold = last / 3;
  for (let parent = top.parentNode; parent && open(parent); parent = parent.parentNode) {
    const score = scores.get(parent);
    if (score === undefined) continue;
    if (score < threshold) break;
    if (score > last) top = parent;
    last = score;
  }
  // An only child says nothing its parent does not.
  while (top.parentNode && open(top.parentNode) && top.parentNode.childNodes.filter(isElement).length === 1) {
    top = top.parentNode;
  }
  return top;
}

function contains(ancestor: HTMLElement, el: HTMLElement): boolean {
  for (let node: HTMLElement | null = el; node; node = node.parentNode) if (node === ancestor) return true;
  return false;
}

/** The candidate and those of its siblings that score near it or read as prose (never the neighbour `fence`). */
function withSiblings(top: HTMLElement, topScore: number, scores: Map<HTMLElement, number>, stats: StatsCache, fence?: HTMLElement): HTMLElement[] {
  const parent = top.parentNode;
  // The page's own articleBody marker says where the article ends: no sibling joins it.
  if (!parent || tagOf(top) === 'body' || structuredHint(top, tagOf(top)) >= ARTICLE_BODY_HINT) return [top];
  const threshold = Math.max(10, topScore * 0.2);
  const topClass = top.getAttribute('class') ?? '';
  const blocks: HTMLElement[] = [];
  for (const sibling of parent.childNodes) {
    if (!isElement(sibling)) continue;
    if (sibling === top) {
      blocks.push(sibling);
      continue;
    }
    if (fence && contains(sibling, fence)) continue;
    let bonus = 0;
    if (topClass !== '' && sibling.getAttribute('class') === topClass) bonus += topScore * 0.2;
    const score = scores.get(sibling);
    if (score !== undefined && score + bonus >= threshold) {
      blocks.push(sibling);
      continue;
    }
    if (tagOf(sibling) === 'p') {
      const { chars } = stats.of(sibling);
      const density = stats.linkDensity(sibling);
      if ((chars > 80 && density < 0.25) || (chars > 0 && chars <= 80 && density === 0 && /\.( |$)/.test(sibling.text))) blocks.push(sibling);
    }
  }
  return blocks;
}
