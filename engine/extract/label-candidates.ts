/**
 * Label fields of a kind, from its induction pages: for each label the site shows, the anchors under
 * which it gives one value per page, chosen so the field survives the ways pages of one kind differ.
 * - An anchor names the element that holds the label and its value (the `dd`'s `dl`, the pair's block,
 *   the row), not the value's own element, whose tag or class moves from page to page (the price in a
 *   `<span class="amount">` on one page, in a finance link or a `<span class="amount sale">` on another).
 * - It is the shortest suffix of that element's path under which the label is unique on most pages:
 *   short enough to survive a wrapper added around a block, long enough to tell the listing's own
 *   price from the prices of the "similar listings" beside it.
 * - When the kind's pages come in variants (microdata on some, A/B layouts, a table of facts on some
 *   and a list of terms on others), one anchor covers the pages of one variant: the field keeps an
 *   anchor per variant (a few at most, each covering several pages), and labels shown in several
 *   shapes (a row here, a term there) are one field with a source per shape.
 */
import type { LabelPair, PageSignals } from './signals';
import { anchorSuffix } from './signals';
import type { Source } from './recipe';

export interface Candidate {
  key: string;
  /** The best source, then those of other variants. */
  sources: Source[];
  name: string;
  label?: string;
  /** Where a label candidate's first occurrence sits (chrome or not). */
  path?: string[];
  /** page index → raw value */
  values: Map<number, string>;
}

const MAX_ANCHOR_STEPS = 8;
/** Anchors (one per variant) a field keeps at most for one shape of its label. */
const MAX_VARIANT_ANCHORS = 3;
/** A variant's anchor must give the field on this many pages of its own. */
const MIN_VARIANT_PAGES = 2;

interface Occurrence {
  page: number;
  path: string[];
  value: string;
}

/** Elements of the site's chrome: a label there (a footer's "Phone: …") labels the site, not the page. */
export const CHROME_STEP = /^(header|footer|nav|aside)\b|[.#][\w-]*(header|footer|nav|menu|breadcrumb|cookie|banner|sidebar)[\w-]*/i;

/** Page → the one value an anchor finds there (pages where it finds several different ones are left out). */
function valuesUnder(occurrences: readonly Occurrence[], length: number, parent: boolean): Map<string, Map<number, string>> {
  const byAnchor = new Map<string, Map<number, string[]>>();
  for (const occurrence of occurrences) {
    const path = parent ? occurrence.path.slice(0, -1) : occurrence.path;
    if (path.length === 0) continue;
    const anchor = anchorSuffix(path, length);
    const pages = byAnchor.get(anchor) ?? new Map<number, string[]>();
    pages.set(occurrence.page, [...(pages.get(occurrence.page) ?? []), occurrence.value]);
    byAnchor.set(anchor, pages);
  }
  const out = new Map<string, Map<number, string>>();
  for (const [anchor, pages] of [...byAnchor].sort(([a], [b]) => a.localeCompare(b))) {
    out.set(anchor, new Map([...pages].filter(([, found]) => found.every((value) => value === found[0])).map(([page, found]): [number, string] => [page, found[0]!])));
  }
  return out;
}

/**
 * Anchors of one length covering the most pages: the best, then for pages it misses the best of the
 * rest, while each adds pages of its own. A page another anchor already reads is not counted again.
 */
function cover(anchors: Map<string, Map<number, string>>): Array<{ anchor: string; values: Map<number, string> }> {
  const chosen: Array<{ anchor: string; values: Map<number, string> }> = [];
  const covered = new Set<number>();
  for (let round = 0; round < MAX_VARIANT_ANCHORS; round++) {
    let best: { anchor: string; values: Map<number, string>; gain: number } | undefined;
    for (const [anchor, values] of anchors) {
      if (chosen.some((taken) => taken.anchor === anchor)) continue;
      const gain = [...values.keys()].filter((page) => !covered.has(page)).length;
      if (!best || gain > best.gain) best = { anchor, values, gain };
    }
    if (!best || best.gain === 0 || (round > 0 && best.gain < MIN_VARIANT_PAGES)) break;
    chosen.push({ anchor: best.anchor, values: best.values });
    for (const page of best.values.keys()) covered.add(page);
  }
  return chosen;
}

/**
 * One label in one shape: the shortest anchors (one per variant) under which it is read on `needed`
 * pages; when no length reaches that (a variant's shape on fewer pages), the length reading it on most.
 */
function shapeCandidate(first: LabelPair, occurrences: readonly Occurrence[], needed: number): Candidate | undefined {
  let best: Candidate | undefined;
  for (let length = 1; length <= MAX_ANCHOR_STEPS; length++) {
    // The element holding label and value first; the value's own element only when that holder is shared.
    for (const parent of [true, false]) {
      const chosen = cover(valuesUnder(occurrences, length, parent));
      if (chosen.length === 0) continue;
      const values = new Map<number, string>();
      for (const { values: found } of chosen) for (const [page, value] of found) if (!values.has(page)) values.set(page, value);
      if (best && values.size <= best.values.size) continue;
      const sources: Source[] = chosen.map(({ anchor }) => ({ kind: 'label', label: first.label, shape: first.shape, anchor, ...(parent ? { parent: true } : {}) }));
      best = { key: `label|${first.label}|${first.shape}|${chosen[0]!.anchor}`, name: first.name, label: first.label, path: first.path, sources, values };
      if (values.size >= needed) return best;
    }
  }
  return best && best.values.size >= MIN_VARIANT_PAGES ? best : undefined;
}

/**
 * Label candidates of the induction pages, those read on at least `support` of them. A label whose
 * occurrences all sit in the site's chrome is left to the caller to judge (its `path` says where).
 */
export function labelCandidates(signals: readonly PageSignals[], support: number): Candidate[] {
  const groups = new Map<string, { first: LabelPair; occurrences: Occurrence[] }>();
  signals.forEach((page, index) => {
    for (const pair of page.labels) {
      const key = `${pair.label}|${pair.shape}`;
      const group = groups.get(key) ?? { first: pair, occurrences: [] };
      group.occurrences.push({ page: index, path: pair.path, value: pair.value });
      groups.set(key, group);
    }
  });
  const needed = Math.max(1, Math.ceil(signals.length * support));
  // Each shape alone on at least two pages; a label shown in several shapes is then one field.
  const byName = new Map<string, Candidate[]>();
  for (const { first, occurrences } of [...groups.values()].sort((a, b) => b.occurrences.length - a.occurrences.length || `${a.first.label}|${a.first.shape}`.localeCompare(`${b.first.label}|${b.first.shape}`))) {
    const candidate = shapeCandidate(first, occurrences, needed);
    if (candidate) byName.set(candidate.name, [...(byName.get(candidate.name) ?? []), candidate]);
  }
  const out: Candidate[] = [];
  for (const shapes of byName.values()) {
    const inPage = shapes.filter((candidate) => !(candidate.path ?? []).some((step) => CHROME_STEP.test(step)));
    const kept = inPage.length > 0 ? inPage : shapes;
    const [best, ...rest] = kept.sort((a, b) => b.values.size - a.values.size || a.key.localeCompare(b.key));
    const merged: Candidate = { ...best!, sources: [...best!.sources], values: new Map(best!.values) };
    for (const other of rest) {
      const adds = [...other.values.keys()].filter((page) => !merged.values.has(page));
      if (adds.length < MIN_VARIANT_PAGES) continue;
      merged.sources.push(...other.sources);
      for (const page of adds) merged.values.set(page, other.values.get(page)!);
    }
    if (merged.values.size >= needed) out.push(merged);
  }
  return out;
}
