/**
 * The HTML outputs as tasks (engine/threads): each takes the page (its text, or its bytes to decode
 * on the thread) and the parse caps, and answers its value or the cap the page went past. The same
 * functions run inline for small pages (./run.ts), so both paths give the same answer.
 */
import { autoparse } from './autoparse';
import { cssExtract } from './css-extract';
import { decodeHtml } from './decode';
import { withParseCaps } from './dom';
import { extractOutputs, type OutputKind } from './extract';
import { isHtmlRefused, type ParseCap, type ParseCaps } from './limits';
import { findMainContent, renderMainContent, type MainContentFormat } from './main-content';
import { toMarkdown } from './markdown';
import { toPlainText } from './plaintext';

/** A page as an output task takes it: decoded text, or the bytes as fetched with their Content-Type. */
export type HtmlSource = { html: string } | { bytes: Uint8Array; contentType?: string };

export interface HtmlTaskInput<A> {
  page: HtmlSource;
  caps: ParseCaps;
  args: A;
}

export type HtmlAnswer<V> = { ok: true; value: V } | { ok: false; cap: ParseCap; limit: number };

export const sourceText = (page: HtmlSource): string =>
  'html' in page ? page.html : decodeHtml(Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength), page.contentType);

/** An output as a task: the page decoded, parsed under the caller's caps, a cap refusal answered as a value. */
export function htmlTask<A, V>(output: (html: string, args: A) => V): (input: HtmlTaskInput<A>) => HtmlAnswer<V> {
  return (input) => {
    try {
      return { ok: true, value: withParseCaps(input.caps, () => output(sourceText(input.page), input.args)) };
    } catch (error) {
      if (isHtmlRefused(error) && (error.limit === 'size' || error.limit === 'nodes' || error.limit === 'depth')) return { ok: false, cap: error.limit, limit: error.value };
      throw error;
    }
  };
}

export const tasks = {
  markdown: htmlTask((html, args: { url: string }) => toMarkdown(html, args.url)),
  plaintext: htmlTask((html, _args: Record<string, never>) => toPlainText(html)),
  mainContent: htmlTask((html, args: { url: string; format: MainContentFormat; metadata?: boolean }) =>
    renderMainContent(findMainContent(html, args.url), args.format, { metadata: args.metadata === true }),
  ),
  /** The article and the metadata apart (the JSON envelope's `main_content`). */
  mainContentParts: htmlTask((html, args: { url: string; format: MainContentFormat }) => {
    const main = findMainContent(html, args.url);
    return { metadata: main.metadata, content: renderMainContent(main, args.format) };
  }),
  cssExtractor: htmlTask((html, args: { url: string; spec: string }) => cssExtract(html, args.url, args.spec)),
  autoparse: htmlTask((html, args: { url: string }) => autoparse(html, args.url)),
  outputs: htmlTask((html, args: { url: string; kinds: OutputKind[] }) => extractOutputs(html, args.url, args.kinds)),
};

export type OutputTasks = typeof tasks;
