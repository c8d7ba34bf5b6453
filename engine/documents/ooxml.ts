/**
 * What OOXML and ODF readers share: opening the zip under the caps, reading XML parts (refusing DTDs,
 * capping nesting), relationships, the stated metadata, and the repacked archive for libraries.
 */
import { documentError } from './failures';
import type { DocumentInfo, DocumentFormat, DocumentLimits } from './types';
import { first, parseXml, textOf, type XmlElement } from './xml';
import { repack, ZipArchive, type ZipBudget } from './zip';

export interface ReadContext {
  limits: DocumentLimits;
  speakerNotes: boolean;
}

export function openZip(bytes: Buffer, limits: DocumentLimits): ZipArchive {
  const budget: ZipBudget = { remaining: limits.maxInflatedBytes };
  return new ZipArchive(bytes, budget, limits.maxEntries);
}

const DTD = /<!(?:DOCTYPE|ENTITY)/i;

/**
 * Nesting depth of an XML text by a linear scan of its tags, for parts handed to libraries that parse
 * recursively: past `max` the document is refused before any of them sees it.
 */
export function checkXmlText(text: string, max: number): void {
  if (DTD.test(text)) throw documentError('document_unreadable', 'xml_dtd', 'The document contains an XML document type declaration, which the service does not read.');
  let depth = 0;
  for (let at = text.indexOf('<'); at >= 0; at = text.indexOf('<', at + 1)) {
    const next = text.charCodeAt(at + 1);
    if (next === 0x2f /* / */) depth--;
    else if (next !== 0x3f /* ? */ && next !== 0x21 /* ! */) {
      const end = text.indexOf('>', at);
      if (end < 0) break;
      if (text.charCodeAt(end - 1) !== 0x2f) depth++;
      if (depth > max) throw documentError('document_too_complex', 'xml_depth', `The document nests elements deeper than ${max} levels.`);
      at = end;
    }
  }
}

export function readXml(zip: ZipArchive, name: string, limits: DocumentLimits): XmlElement | undefined {
  const text = zip.text(name);
  return text === undefined ? undefined : parseXml(text, limits.maxDepth);
}

export function requireXml(zip: ZipArchive, name: string, limits: DocumentLimits): XmlElement {
  const part = readXml(zip, name, limits);
  if (!part) throw documentError('document_unreadable', 'ooxml_missing_part', 'The document lacks a part every file of its format has.');
  return part;
}

/**
 * The XML parts of the archive (media left out: libraries read images only when asked, and we never
 * ask), each checked, as a stored zip.
 */
export function repackXmlParts(zip: ZipArchive, limits: DocumentLimits, fix?: (name: string, text: string) => string): Buffer {
  const parts: { name: string; data: Buffer }[] = [];
  for (const name of zip.names) {
    if (!/\.(?:xml|rels)$/i.test(name)) continue;
    let data = zip.read(name)!;
    const text = data.toString('utf8');
    checkXmlText(text, limits.maxDepth);
    if (fix) {
      const fixed = fix(name, text);
      if (fixed !== text) data = Buffer.from(fixed, 'utf8');
    }
    parts.push({ name, data });
  }
  return repack(parts);
}

export interface Relationship {
  type: string;
  target: string;
  external: boolean;
}

/** The relationships of a part (`ppt/slides/slide1.xml` → `ppt/slides/_rels/slide1.xml.rels`), by id. */
export function relationships(zip: ZipArchive, part: string, limits: DocumentLimits): Map<string, Relationship> {
  const slash = part.lastIndexOf('/');
  const folder = part.slice(0, slash + 1);
  const rels = readXml(zip, `${folder}_rels/${part.slice(slash + 1)}.rels`, limits);
  const out = new Map<string, Relationship>();
  const root = first(rels, 'Relationships');
  if (!root) return out;
  for (const rel of root.children) {
    if (typeof rel === 'string' || rel.name !== 'Relationship') continue;
    const external = rel.attrs.TargetMode === 'External';
    const target = rel.attrs.Target ?? '';
    out.set(rel.attrs.Id ?? '', { type: rel.attrs.Type ?? '', external, target: external ? target : resolvePart(folder, target) });
  }
  return out;
}

/** A relationship target relative to its part's folder, as an archive name. */
export function resolvePart(folder: string, target: string): string {
  const segments = (target.startsWith('/') ? target.slice(1) : folder + target).split('/');
  const out: string[] = [];
  for (const segment of segments) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  return out.join('/');
}

const textIn = (root: XmlElement | undefined, name: string): string | null => {
  const node = first(root, name);
  const value = node ? textOf(node).trim() : '';
  return value || null;
};

/** ISO 8601 from the file's own date, or null when it states none or nonsense. */
const isoDate = (value: string | null): string | null => {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
};

/** OOXML's docProps/core.xml (title, creator, dates) and docProps/app.xml (the stated page or slide count). */
export function ooxmlInfo(zip: ZipArchive, format: DocumentFormat, limits: DocumentLimits, pages: number | null): DocumentInfo {
  const core = first(readXml(zip, 'docProps/core.xml', limits), 'cp:coreProperties');
  let stated = pages;
  if (stated === null) {
    const app = first(readXml(zip, 'docProps/app.xml', limits), 'Properties');
    const count = Number(textIn(app, 'Pages') ?? NaN);
    stated = Number.isInteger(count) && count > 0 ? count : null;
  }
  return {
    format,
    pages: stated,
    title: textIn(core, 'dc:title'),
    author: textIn(core, 'dc:creator'),
    created: isoDate(textIn(core, 'dcterms:created')),
    modified: isoDate(textIn(core, 'dcterms:modified')),
    pagesWithoutText: [],
  };
}

/** ODF's meta.xml. */
export function odfInfo(zip: ZipArchive, format: DocumentFormat, limits: DocumentLimits, pages: number | null): DocumentInfo {
  const meta = first(first(readXml(zip, 'meta.xml', limits), 'office:document-meta'), 'office:meta');
  let stated = pages;
  if (stated === null) {
    const count = Number(first(meta, 'meta:document-statistic')?.attrs['meta:page-count'] ?? NaN);
    stated = Number.isInteger(count) && count > 0 ? count : null;
  }
  return {
    format,
    pages: stated,
    title: textIn(meta, 'dc:title'),
    author: textIn(meta, 'meta:initial-creator') ?? textIn(meta, 'dc:creator'),
    created: isoDate(textIn(meta, 'meta:creation-date')),
    modified: isoDate(textIn(meta, 'dc:date')),
    pagesWithoutText: [],
  };
}
