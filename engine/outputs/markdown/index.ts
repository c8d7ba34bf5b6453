/**
 * HTML to Markdown for `response_type=markdown`: the page body as readable GFM (headings, nested
 * lists, tables, fenced code with its language, absolute links and images), without scripts, styles,
 * form controls or hidden elements. See ../README.md for why this converter and not a library.
 */
import { documentBase, documentParts, parseHtml } from '../dom';
import { joinBlocks, renderBlocks } from './blocks';

export function toMarkdown(html: string, url: string): string {
  const root = parseHtml(html);
  const { body } = documentParts(root);
  return joinBlocks(renderBlocks(body, { base: documentBase(root, url) }));
}
