/**
 * DOCX through mammoth (headings from paragraph styles, lists from numbering levels, tables, links)
 * into HTML, which the service's own converter turns into Markdown or text. Mammoth gets the repacked
 * XML parts only: images are never read, and external files never (`externalFileAccess: false`).
 */
import mammoth from 'mammoth';
import type { DocumentModel } from './model';
import { ooxmlInfo, repackXmlParts, type ReadContext } from './ooxml';
import { documentError } from './failures';
import type { DocumentInfo } from './types';
import type { ZipArchive } from './zip';

const STYLE_MAP = ["p[style-name='Title'] => h1:fresh", 'p.Title => h1:fresh', "p[style-name='Subtitle'] => p:fresh", "r[style-name='Strong'] => strong"];

/** Mammoth takes any `w:tblHeader` for a header row, even one switched off: those are dropped first. */
const HEADER_OFF = /<w:tblHeader w:val="(?:0|false|off)"\s*\/>/g;

const CELL_OPEN = /<(t[dh](?: [^>]*)?)><p>/g;
const CELL_CLOSE = /<\/p><\/(t[dh])>/g;

export async function readDocx(zip: ZipArchive, context: ReadContext): Promise<{ model: DocumentModel; info: DocumentInfo }> {
  if (!zip.has('word/document.xml')) throw documentError('document_unreadable', 'ooxml_missing_part', 'The file is not a Word document.');
  const buffer = repackXmlParts(zip, context.limits, (name, text) => (name === 'word/document.xml' ? text.replace(HEADER_OFF, '') : text));
  const result = await mammoth.convertToHtml(
    { buffer },
    {
      styleMap: STYLE_MAP,
      ignoreEmptyParagraphs: true,
      externalFileAccess: false,
      convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
    },
  );
  // A cell's own paragraph is not a paragraph of the page: plain text would set each cell apart.
  const html = result.value.replace(CELL_OPEN, '<$1>').replace(CELL_CLOSE, '</$1>');
  return {
    model: { pages: [[{ kind: 'html', html }]], paged: false },
    info: ooxmlInfo(zip, 'docx', context.limits, null),
  };
}
