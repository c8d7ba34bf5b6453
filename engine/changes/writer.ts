/**
 * Builds a line's comparison key: the line's text with each volatile run replaced by a placeholder
 * naming its kind, and the runs themselves kept aside (to say what was ignored).
 */
import type { MaskedValue, NoiseKind } from './types';

/**
 * What stands in the key for a run of each kind. Random identifiers share one placeholder: the same
 * slot of a page may hold an all-digit hex id in one answer and a token-looking one in the next, and
 * it must compare equal. Private-use characters around it: no page text is confused with it.
 */
const CLASSES: Record<NoiseKind, string> = {
  timestamp: 'time',
  uuid: 'id',
  hex: 'id',
  token: 'id',
  request_id: 'id',
  counter: 'count',
  duration: 'duration',
  cache_buster: 'buster',
  tracking: 'tracking',
  learned: 'learned',
  layout: 'layout',
};

export const placeholder = (kind: NoiseKind): string => `\ue000${CLASSES[kind]}\ue001`;

const PLACEHOLDERS = new Map<NoiseKind, string>();
const placeholderOf = (kind: NoiseKind): string => {
  let text = PLACEHOLDERS.get(kind);
  if (text === undefined) PLACEHOLDERS.set(kind, (text = placeholder(kind)));
  return text;
};

export const NO_VALUES: readonly MaskedValue[] = Object.freeze([]);

/**
 * Masked runs kept per snapshot: a hostile page of nothing but clock times would otherwise hold
 * millions of them. Past the bound the keys are the same, only the count of what was ignored stops.
 */
export const MAX_VALUES = 50_000;

export class KeyWriter {
  private parts: string[] = [];
  private masked: MaskedValue[] = [];
  private kept = 0;

  constructor(private readonly maxValues = MAX_VALUES) {}

  text(text: string): void {
    if (text !== '') this.parts.push(text);
  }

  /** A volatile run: its kind stands in the key. */
  mask(kind: NoiseKind, value: string): void {
    this.parts.push(placeholderOf(kind));
    this.keep(kind, value);
  }

  /** A run left out of the key altogether (a tracking parameter): whether it is there does not count. */
  drop(kind: NoiseKind, value: string): void {
    this.keep(kind, value);
  }

  private keep(kind: NoiseKind, value: string): void {
    if (this.kept >= this.maxValues) return;
    this.kept++;
    this.masked.push({ kind, value });
  }

  /** The key and values written since the last call; the writer is then empty again (its bound stays spent). */
  take(): { key: string; values: readonly MaskedValue[] } {
    const key = this.parts.length === 1 ? (this.parts[0] as string) : this.parts.join('');
    const values = this.masked.length === 0 ? NO_VALUES : this.masked;
    this.parts = [];
    this.masked = [];
    return { key, values };
  }
}
