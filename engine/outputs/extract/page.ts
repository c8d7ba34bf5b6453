/**
 * A parsed page shared by every extractor of one request, so `outputs=*` parses the HTML once.
 */
import { type HTMLElement, documentBase, documentParts, parseHtml, resolveUrl, visibleText } from '../dom';

export interface Page {
  root: HTMLElement;
  head: HTMLElement | undefined;
  body: HTMLElement;
  /** What relative URLs resolve against (`<base href>` or the page URL). */
  base: string;
  url: string;
  /** Visible text, one block per line, without code: what contact and hashtag patterns run over. */
  readonly prose: string;
  resolve(value: string | undefined): string | undefined;
}

const CODE_TAGS: ReadonlySet<string> = new Set(['pre', 'code', 'kbd', 'samp', 'xmp', 'listing']);

export function loadPage(html: string, url: string): Page {
  const root = parseHtml(html);
  const { head, body } = documentParts(root);
  const base = documentBase(root, url);
  let prose: string | undefined;
  return {
    root,
    head,
    body,
    base,
    url,
    get prose(): string {
      prose ??= visibleText(body, { skip: CODE_TAGS, lines: true });
      return prose;
    },
    resolve: (value) => resolveUrl(value, base),
  };
}

/** Adds values in first-seen order, skipping duplicates by a normalised key. */
export class OrderedSet {
  private readonly seen = new Set<string>();
  readonly values: string[] = [];

  add(value: string | undefined, key: string | undefined = value): void {
    if (value === undefined || key === undefined || value === '' || this.seen.has(key)) return;
    this.seen.add(key);
    this.values.push(value);
  }
}

/** Only web URLs are kept in URL lists; `mailto:`, `tel:` and `data:` have their own outputs or none. */
export const isWebUrl = (url: string | undefined): url is string => url !== undefined && /^https?:\/\//i.test(url);
