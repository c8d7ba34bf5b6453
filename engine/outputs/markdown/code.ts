/**
 * `<pre>` blocks as fenced code. Highlighters split code into spans, lines into `<br>` or per-line
 * elements, and put the language on the `<pre>`, the `<code>` or a wrapper, so all of those are read.
 */
import { type HTMLElement, type Node, BLOCK_TAGS, NodeType, isElement, tagOf } from '../dom';

const LANGUAGE_CLASS = /(?:^|\s)(?:(?:language|lang|highlight-source|highlight)-|brush:\s*)([A-Za-z0-9_+#.-]+)/;
const NOT_A_LANGUAGE = new Set(['none', 'text', 'plain', 'plaintext', 'nohighlight', 'notranslate', 'default']);
const GUTTER_CLASS = /(?:^|\s)(?:linenos?|line-?numbers?(?:-rows)?|gutter|lineno)(?:\s|$)/;

function languageOf(el: HTMLElement | null | undefined): string | undefined {
  if (!el) return undefined;
  const data = el.getAttribute('data-lang') ?? el.getAttribute('data-language');
  if (data) return data;
  const match = LANGUAGE_CLASS.exec(el.getAttribute('class') ?? '');
  return match?.[1];
}

/** The language named by the block or its nearest wrappers, e.g. `language-ts`, `highlight-python`. */
export function codeLanguage(pre: HTMLElement): string {
  const code = pre.childNodes.find((child): child is HTMLElement => isElement(child) && tagOf(child) === 'code');
  const candidates = [code, pre, pre.parentNode, pre.parentNode?.parentNode];
  for (const el of candidates) {
    const lang = languageOf(el)?.toLowerCase();
    if (lang && !NOT_A_LANGUAGE.has(lang)) return lang;
  }
  return '';
}

/** The text of a code block as the browser shows it: whitespace kept, `<br>` as newlines, gutters and buttons left out. */
export function codeText(node: Node): string {
  let out = '';
  for (const child of node.childNodes) {
    if (child.nodeType === NodeType.TEXT_NODE) out += child.text;
    else if (isElement(child)) {
      const tag = tagOf(child);
      if (tag === 'br') out += '\n';
      else if (tag === 'button' || tag === 'script' || tag === 'style' || GUTTER_CLASS.test(child.getAttribute('class') ?? '')) continue;
      else {
        out += codeText(child);
        // Highlighters that wrap each line in a block element rely on layout for the line break.
        if (BLOCK_TAGS.has(tag) && !out.endsWith('\n')) out += '\n';
      }
    }
  }
  return out;
}

export function renderCode(pre: HTMLElement): string {
  // trimEnd, not /\s+$/: the pattern rescans a long inner run of whitespace from each of its characters.
  const text = codeText(pre).replace(/^\r?\n/, '').trimEnd().replace(/\r\n?/g, '\n');
  if (!text) return '';
  let fence = '```';
  while (text.includes(fence)) fence += '`';
  return `${fence}${codeLanguage(pre)}\n${text}\n${fence}`;
}
