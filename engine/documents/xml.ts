/**
 * XML parts of OOXML and ODF as a small element tree. A document type declaration is refused before
 * parsing: neither format uses one, and it is how external entities (XXE) and entity expansion bombs
 * come in. Nesting is capped while the tree is built.
 */
import { XMLParser } from 'fast-xml-parser';
import { documentError } from './failures';

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}

export type XmlNode = XmlElement | string;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: true,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: false,
});

/** A DTD anywhere in the part (the declaration may follow comments or processing instructions). */
const DTD = /<!(?:DOCTYPE|ENTITY)/i;

type Ordered = Record<string, unknown>;

export function parseXml(text: string, maxDepth: number): XmlElement {
  if (DTD.test(text)) throw documentError('document_unreadable', 'xml_dtd', 'The document contains an XML document type declaration, which the service does not read.');
  let parsed: unknown;
  try {
    parsed = parser.parse(text);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    throw documentError('document_unreadable', 'xml_parse', 'An XML part of the document is malformed.');
  }
  const root: XmlElement = { name: '#document', attrs: {}, children: convert(parsed as Ordered[], 0, maxDepth) };
  return root;
}

function convert(nodes: Ordered[], depth: number, maxDepth: number): XmlNode[] {
  if (depth > maxDepth) throw documentError('document_too_complex', 'xml_depth', `The document nests elements deeper than ${maxDepth} levels.`);
  const out: XmlNode[] = [];
  for (const node of nodes) {
    for (const key of Object.keys(node)) {
      if (key === ':@') continue;
      const value = node[key];
      if (key === '#text') {
        out.push(String(value));
        continue;
      }
      const attrs = (node[':@'] as Record<string, unknown> | undefined) ?? {};
      const element: XmlElement = { name: key, attrs: {}, children: Array.isArray(value) ? convert(value as Ordered[], depth + 1, maxDepth) : [] };
      for (const [name, attr] of Object.entries(attrs)) element.attrs[name] = String(attr);
      out.push(element);
    }
  }
  return out;
}

export const isElement = (node: XmlNode | undefined): node is XmlElement => typeof node === 'object' && node !== null;

/** The local part of a qualified name: `w:p` → `p`. */
export const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

export function elements(node: XmlElement, name?: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (const child of node.children) if (isElement(child) && (name === undefined || child.name === name)) out.push(child);
  return out;
}

export function first(node: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!node) return undefined;
  for (const child of node.children) if (isElement(child) && child.name === name) return child;
  return undefined;
}

/** The first descendant of that name, depth first (iterative: trees can be deep). */
export function find(node: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!node) return undefined;
  const stack: XmlElement[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current !== node && current.name === name) return current;
    for (let i = current.children.length - 1; i >= 0; i--) {
      const child = current.children[i];
      if (isElement(child)) stack.push(child);
    }
  }
  return undefined;
}

export function findAll(node: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const stack: XmlElement[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current !== node && current.name === name) out.push(current);
    for (let i = current.children.length - 1; i >= 0; i--) {
      const child = current.children[i];
      if (isElement(child)) stack.push(child);
    }
  }
  return out;
}

/** All text below a node, in order. */
export function textOf(node: XmlNode): string {
  if (typeof node === 'string') return node;
  let out = '';
  const stack: XmlNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (typeof current === 'string') out += current;
    else for (let i = current.children.length - 1; i >= 0; i--) stack.push(current.children[i]!);
  }
  return out;
}
