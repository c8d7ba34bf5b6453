/**
 * `outputs`: named kinds of data pulled out of a page, returned as one JSON object keyed by kind.
 * `parseOutputKinds` validates the parameter before any fetch; `extractOutputs` runs the kinds asked
 * for over one parse of the page.
 */
import type { ErrorCode } from '../../../base/errors';
import { audios, favicon, images, videos } from './media';
import { emails, hashtags, phoneNumbers } from './contacts';
import { loadPage, type Page } from './page';
import { type Headings, type Menu, type Metadata, headings, links, menus, metadata } from './structure';
import { type TableOutput, tables } from './tables';

export const OUTPUT_KINDS = [
  'emails', 'phone_numbers', 'headings', 'images', 'audios', 'videos', 'links', 'tables', 'menus', 'hashtags', 'metadata', 'favicon',
] as const;

export type OutputKind = (typeof OUTPUT_KINDS)[number];

export interface OutputValues {
  emails: string[];
  phone_numbers: string[];
  headings: Headings;
  images: string[];
  audios: string[];
  videos: string[];
  links: string[];
  tables: TableOutput[];
  menus: Menu[];
  hashtags: string[];
  metadata: Metadata;
  favicon: string;
}

export type Outputs = Partial<OutputValues>;

const EXTRACTORS: { [K in OutputKind]: (page: Page) => OutputValues[K] } = {
  emails,
  phone_numbers: phoneNumbers,
  headings,
  images,
  audios,
  videos,
  links,
  tables,
  menus,
  hashtags,
  metadata,
  favicon,
};

export const isOutputKind = (value: string): value is OutputKind => (OUTPUT_KINDS as readonly string[]).includes(value);

export type OutputKindsParse =
  | { ok: true; kinds: OutputKind[] }
  | { ok: false; code: Extract<ErrorCode, 'REQS004'>; invalid: string; detail: string };

/** Reads the comma-separated `outputs` parameter; `*` means every kind. Names are case-insensitive. */
export function parseOutputKinds(value: string): OutputKindsParse {
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  const kinds = new Set<OutputKind>();
  for (const name of names) {
    if (name === '*') OUTPUT_KINDS.forEach((kind) => kinds.add(kind));
    else if (isOutputKind(name)) kinds.add(name);
    else {
      const shown = name === '' ? '(empty)' : `"${name}"`;
      return { ok: false, code: 'REQS004', invalid: name, detail: `outputs has an unknown value ${shown}; use * or any of ${OUTPUT_KINDS.join(', ')}.` };
    }
  }
  return { ok: true, kinds: OUTPUT_KINDS.filter((kind) => kinds.has(kind)) };
}

/** Extracts the kinds asked for (`*` for all), in the catalogue's order. */
export function extractOutputs(html: string, url: string, kinds: readonly (OutputKind | '*')[]): Outputs {
  const page = loadPage(html, url);
  const wanted = kinds.includes('*') ? OUTPUT_KINDS : OUTPUT_KINDS.filter((kind) => kinds.includes(kind));
  const out: Record<string, unknown> = {};
  for (const kind of wanted) out[kind] = EXTRACTORS[kind](page);
  return out as Outputs;
}
