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
import { scanHtml } from './scan';
import { findMainContent, renderMainContent, type MainContentFormat } from './main-content';
import { toMarkdown } from './markdown';
import { toPlainText } from './plaintext';

/** A page as an output task takes it: decoded text, or the bytes as fetched with their Content-Type. */
export type HtmlSource = { html: string } | { bytes: Uint8Array; contentType?: string };

export interface HtmlTaskInput<A> {
  page: HtmlSource;
  caps: ParseCaps;
  args: A;
  /** The page as the pre-scan left it, when the caller scanned it on this thread already (inline). */
  scanned?: string;
}

export type HtmlAnswer<V> = { ok: true; value: V } | { ok: false; cap: ParseCap; limit: number };

export const sourceText = (page: HtmlSource): string =>
  'html' in page ? page.html : decodeHtml(Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength), page.contentType);

/**
 * An output as a task: the page decoded, scanned once under the caller's caps (a cap refusal is
 * answered as a value) and handed to the output, whose parses of it skip the scan.
 */
export function htmlTask<A, V>(output: (html: string, args: A) => V): (input: HtmlTaskInput<A>) => HtmlAnswer<V> {
  return (input) => {
    const page = sourceText(input.page);
    let html = input.scanned;
    if (html === undefined) {
      const scan = scanHtml(page, input.caps);
      if (!scan.ok) return { ok: false, cap: scan.cap, limit: scan.limit };
      html = scan.html;
    }
    try {
      return { ok: true, value: withParseCaps(input.caps, () => output(page, input.args), { page, html }) };
    } catch (error) {
      // A page the output parses besides this one (none does today) may still go past a cap.
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
