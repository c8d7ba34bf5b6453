/**
 * Microdata items (`itemscope`/`itemprop`) in the JSON shape of the HTML standard's microdata-to-JSON
 * algorithm: `{ type: [...], id?, properties: { name: [values] } }`, nested items as values.
 */
import { type HTMLElement, collapseWhitespace, isElement, resolveUrl } from '../dom';

export interface MicrodataItem {
  type?: string[];
  id?: string;
  properties: Record<string, unknown[]>;
}

const MAX_ITEMS = 200;
const MAX_DEPTH = 12;

const URL_PROPERTY: ReadonlyMap<string, string> = new Map([
  ['a', 'href'], ['area', 'href'], ['link', 'href'], ['audio', 'src'], ['embed', 'src'], ['iframe', 'src'], ['img', 'src'],
  ['source', 'src'], ['track', 'src'], ['video', 'src'], ['object', 'data'],
]);

/** A property's value by element kind; `content` wins where sites put it on any element (schema.org usage). */
function propertyValue(el: HTMLElement, base: string): string {
  const tag = el.rawTagName;
  const content = el.getAttribute('content');
  if (content !== undefined) return content.trim();
  const urlAttribute = URL_PROPERTY.get(tag);
  if (urlAttribute) {
    const raw = el.getAttribute(urlAttribute);
    return resolveUrl(raw, base) ?? raw?.trim() ?? '';
  }
  if (tag === 'data' || tag === 'meter') return el.getAttribute('value')?.trim() ?? '';
  if (tag === 'time') return (el.getAttribute('datetime') ?? collapseWhitespace(el.text)).trim();
  return collapseWhitespace(el.text).trim();
}

function readItem(item: HTMLElement, root: HTMLElement, base: string, depth: number): MicrodataItem {
  const properties = Object.create(null) as Record<string, unknown[]>;
  const visited = new Set<HTMLElement>([item]);
  const visitElement = (el: HTMLElement): void => {
    if (visited.has(el)) return;
    visited.add(el);
    const names = el.getAttribute('itemprop')?.trim();
    const scope = el.hasAttribute('itemscope');
    if (names) {
      const value = scope && depth < MAX_DEPTH ? readItem(el, root, base, depth + 1) : propertyValue(el, base);
      for (const name of names.split(/\s+/)) (properties[name] ??= []).push(value);
    }
    // Properties inside a nested item belong to that item.
    if (!scope) visitChildren(el);
  };
  const visitChildren = (el: HTMLElement): void => {
    for (const child of el.childNodes) if (isElement(child)) visitElement(child);
  };
  visitChildren(item);
  for (const id of item.getAttribute('itemref')?.trim().split(/\s+/) ?? []) {
    const referenced = id ? root.getElementById(id) : null;
    if (referenced) visitElement(referenced);
  }
  const out: MicrodataItem = { properties };
  const type = item.getAttribute('itemtype')?.trim();
  if (type) out.type = type.split(/\s+/);
  const id = item.getAttribute('itemid')?.trim();
  if (id) out.id = resolveUrl(id, base) ?? id;
  return out;
}

/** Top-level items: `itemscope` elements that are not themselves a property of another item. */
export function microdata(root: HTMLElement, base: string): MicrodataItem[] {
  return root
    .querySelectorAll('[itemscope]')
    .filter((el) => !el.hasAttribute('itemprop'))
    .slice(0, MAX_ITEMS)
    .map((el) => readItem(el, root, base, 0));
}
