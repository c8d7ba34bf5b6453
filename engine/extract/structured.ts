/**
 * Structured data a page carries besides its markup, flattened to dot paths: JSON-LD (its `@graph`
 * items each under their `@type`) and embedded application state (`__NEXT_DATA__` and other
 * `application/json` scripts with an id, `window.__STATE__ = {...}` assignments).
 */
import { jsonLd } from '../outputs/autoparse/jsonld';
import { collapseWhitespace, type HTMLElement } from '../outputs/dom';

const clean = (text: string): string => collapseWhitespace(text).trim();

export interface StructuredValue {
  source: 'jsonld' | 'embedded';
  /** JSON-LD: the object's `@type`; embedded: the script that holds it. */
  scope: string;
  path: string;
  value: string;
}

/** Scalar leaves of a JSON value as dot paths (arrays of scalars joined, arrays of objects by first item). */
export function flatten(value: unknown, prefix = '', out: Array<[string, string]> = [], depth = 0): Array<[string, string]> {
  if (depth > 8 || value === null || value === undefined) return out;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    const text = clean(String(value));
    if (text && prefix) out.push([prefix, text]);
    return out;
  }
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item !== 'object' || item === null)) {
      const joined = value.map((item) => clean(String(item))).filter(Boolean);
      if (joined.length > 0 && prefix) out.push([prefix, joined.join(', ')]);
    } else if (value.length > 0) {
      flatten(value[0], prefix, out, depth + 1);
    }
    return out;
  }
  if (typeof value === 'object') {
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (key.startsWith('@') && key !== '@id') continue;
      flatten(child, prefix ? `${prefix}.${key}` : key, out, depth + 1);
    }
  }
  return out;
}

function typeOf(item: Record<string, unknown>): string {
  const type = item['@type'];
  return Array.isArray(type) ? String(type[0] ?? 'Thing') : typeof type === 'string' ? type : 'Thing';
}

export function jsonLdValues(root: HTMLElement): StructuredValue[] {
  const values: StructuredValue[] = [];
  const items: unknown[] = [];
  for (const block of jsonLd(root)) {
    const graph = (block as { '@graph'?: unknown })?.['@graph'];
    if (Array.isArray(graph)) items.push(...(graph as unknown[]));
    else items.push(block);
  }
  for (const item of items) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const scope = typeOf(item as Record<string, unknown>);
    for (const [path, value] of flatten(item)) values.push({ source: 'jsonld', scope, path, value });
  }
  return values;
}

const STATE_ASSIGNMENT = /^\s*window\.(__[A-Z0-9_]+__)\s*=\s*(\{[\s\S]*\})\s*;?\s*$/;

export function embeddedValues(root: HTMLElement): StructuredValue[] {
  const values: StructuredValue[] = [];
  for (const script of root.querySelectorAll('script')) {
    const type = (script.getAttribute('type') ?? '').toLowerCase();
    const id = script.getAttribute('id');
    let scope: string | undefined;
    let json: string | undefined;
    if (type === 'application/json' && id) {
      scope = `script#${id}`;
      json = script.rawText;
    } else if (type === '' || type === 'text/javascript') {
      const match = STATE_ASSIGNMENT.exec(script.rawText);
      if (match) {
        scope = `window.${match[1]}`;
        json = match[2];
      }
    }
    if (!scope || !json) continue;
    try {
      for (const [path, value] of flatten(JSON.parse(json))) values.push({ source: 'embedded', scope, path, value });
    } catch {
      // not JSON: not state
    }
  }
  return values;
}

