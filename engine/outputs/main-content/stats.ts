/**
 * Text measures of a subtree (characters, characters inside links, commas), computed once per element
 * bottom-up and cached, so scoring and pruning read them without walking the subtree again.
 */
import { type HTMLElement, NodeType, isElement, tagOf } from '../dom';

export interface TextStats {
  chars: number;
  linkChars: number;
  commas: number;
}

const COMMAS = /[,，、،]/g;

export class StatsCache {
  private readonly cache = new Map<HTMLElement, TextStats>();

  of(el: HTMLElement): TextStats {
    const cached = this.cache.get(el);
    if (cached) return cached;
    const stats: TextStats = { chars: 0, linkChars: 0, commas: 0 };
    for (const child of el.childNodes) {
      if (child.nodeType === NodeType.TEXT_NODE) {
        const text = child.rawText;
        if (text.length === 0) continue;
        stats.chars += countChars(text);
        stats.commas += text.match(COMMAS)?.length ?? 0;
      } else if (isElement(child)) {
        const inner = this.of(child);
        stats.chars += inner.chars;
        stats.commas += inner.commas;
        stats.linkChars += tagOf(child) === 'a' ? inner.chars : inner.linkChars;
      }
    }
    this.cache.set(el, stats);
    return stats;
  }

  /** Share of an element's text that is link text; 0 for an element without text. */
  linkDensity(el: HTMLElement): number {
    const { chars, linkChars } = this.of(el);
    return chars === 0 ? 0 : linkChars / chars;
  }

  /** Forgets an element and its ancestors after the subtree changed. */
  invalidate(el: HTMLElement | null): void {
    for (let node = el; node; node = node.parentNode) this.cache.delete(node);
  }
}

/** Characters a reader sees: whitespace runs count as one, entities roughly as one. */
function countChars(raw: string): number {
  let count = 0;
  let space = true;
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === 32 || code === 10 || code === 9 || code === 13) {
      if (!space) count++;
      space = true;
    } else {
      count++;
      space = false;
    }
  }
  return count;
}
