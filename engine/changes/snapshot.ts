/**
 * A page reduced for comparison: its Markdown (the converter already leaves out scripts, styles,
 * comments, attributes other than link targets and image sources, form controls with hidden inputs,
 * and hidden elements), one key per line with volatile runs masked, and a fingerprint of the keys.
 */
import { createHash } from 'node:crypto';
import { toMarkdown } from '../outputs/markdown';
import type { MaskedValue, Snapshot } from './types';
import * as volatileModule from './volatile';
import { KeyWriter, NO_VALUES } from './writer';
// Local bindings, taken once: the TypeScript runner compiles to CommonJS, where each call through an
// imported name reads a getter, and in the scanning loops that cost more than the scanning itself.
const { writeLine } = volatileModule;

/**
 * Revision of the masking rules, part of every fingerprint: fingerprints made under other rules never
 * match, so a comparison across a rules change reads both versions' Markdown instead of trusting them.
 */
export const RULES_REVISION = 1;

const isBlank = (line: string): boolean => {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 0xa0) return false;
  }
  return true;
};

/** The snapshot of a page's Markdown (`toMarkdown` output, or a stored version's). */
export function snapshotOf(markdown: string): Snapshot {
  const lines = markdown.split('\n');
  const keys: string[] = new Array<string>(lines.length);
  const values: Array<readonly MaskedValue[]> = new Array<readonly MaskedValue[]>(lines.length);
  const writer = new KeyWriter();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      keys[i] = '';
      values[i] = NO_VALUES;
      continue;
    }
    writeLine(line.trimEnd(), writer);
    const { key, values: masked } = writer.take();
    keys[i] = key;
    values[i] = masked;
  }
  return { lines, keys, values, fingerprint: fingerprintOf(keys) };
}

/** `c<revision>:<sha-256>` of the non-blank keys, one per line. */
export function fingerprintOf(keys: readonly string[]): string {
  const counted = keys.filter((key) => key !== '');
  return `c${RULES_REVISION}:${createHash('sha256').update(counted.join('\n'), 'utf8').digest('hex')}`;
}

/** The snapshot of a page's HTML, through the service's Markdown converter. */
export function snapshotOfHtml(html: string, url: string): Snapshot {
  return snapshotOf(toMarkdown(html, url));
}
