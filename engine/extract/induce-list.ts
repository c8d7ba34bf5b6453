/**
 * Induction for list kinds (search results, category listings). The records are the samples: a few
 * pages give dozens of them, which is what makes a field's position and name certain.
 * - the list: the step most pages' main region of records has, under the shortest container anchor
 *   that finds exactly those records on most pages (a decoy block of the same cards elsewhere needs a
 *   longer anchor, as detail fields do next to "similar listings");
 * - the fields: values keyed by where they sit in the record and how they are read, kept when most
 *   records have one and they vary from record to record;
 * - the names: the site's own, from a `Label:` in the record, an `itemprop`, or the class of the value
 *   (`result-price` in `li.result` → `price`); a record's link is its `url`, its image its `image`.
 */
import { parseHtml, type HTMLElement } from '../outputs/dom';
import type { Induction, SamplePage } from './induce';
import { stableTokens, urlPatterns } from './induce';
import { columnNames, mainRegion, MIN_RECORDS, nextPageHref, recordsAt, recordValues, type RecordValue } from './records';
import type { FieldRecipe, RoleRecipe } from './recipe';
import { anchorOf, anchorSuffix, fieldName, pageShingles } from './signals';
import { decimalMarkOf, inferType } from './values';

const FIELD_SUPPORT = 0.5;
const REQUIRED_SUPPORT = 0.9;
const CONTAINER_SUPPORT = 0.8;
const SIGNATURE_SHARE = 0.8;
const MAX_ANCHOR_STEPS = 8;

/** `li.result` → `['result']`: a value's class starting with a record class names the value after it. */
const stepClasses = (step: string): string[] => (/^[^.#[]+((?:\.[^.#[]+)*)$/.exec(step)?.[1] ?? '').split('.').filter(Boolean);

/** A record class and its leading word: `job-card` names `job-title` and `job-company` `title` and `company`. */
const prefixesOf = (recordClasses: readonly string[]): string[] => [...recordClasses, ...recordClasses.flatMap((token) => /^([a-z0-9]+)(?:--|__|[-_])./i.exec(token)?.[1] ?? [])];

function fromClasses(classes: readonly string[], recordClasses: readonly string[]): string {
  for (const token of classes) {
    let rest = token;
    for (const prefix of prefixesOf(recordClasses)) {
      const match = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--|__|[-_])(.+)$`).exec(token);
      if (match?.[1]) rest = match[1];
    }
    const name = fieldName(rest);
    if (name && !recordClasses.includes(token)) return name;
  }
  return '';
}

/** The name a record value goes by, from what the site wrote around it (a table's rows: their column's header). */
function nameOf(value: RecordValue, recordClasses: readonly string[], firstLink: boolean, columns: ReadonlyMap<number, string>): string {
  if (value.take === 'label' && value.label) return fieldName(value.label);
  const column = value.column !== undefined ? fieldName(columns.get(value.column) ?? '') : '';
  if (value.take === 'href') return firstLink ? 'url' : `${column || fromClasses(value.classes, recordClasses) || 'link'}_url`;
  if (column) return column;
  if (value.take === 'src') return fromClasses(value.classes, recordClasses) || 'image';
  if (value.itemprop) return fieldName(value.itemprop.replace(/([a-z0-9])([A-Z])/g, '$1_$2'));
  const own = fromClasses(value.classes, recordClasses);
  if (own) return own;
  // The nearest element above the value that has a class or an itemprop names it.
  const steps = value.path.split('>').reverse();
  for (const step of steps.slice(1)) {
    const itemprop = /\[itemprop=([^\]]+)\]/.exec(step)?.[1];
    if (itemprop) return fieldName(itemprop);
    const name = fromClasses(stepClasses(step), recordClasses);
    if (name) return name;
  }
  return /^h[1-6]$|^a$/.test(value.tag) && value.take === 'text' ? 'title' : '';
}

interface Listed {
  root: HTMLElement;
  body: HTMLElement;
  url: string;
}

/** The container anchor and record step the pages agree on, or why there is none. */
function findList(pages: readonly Listed[], stable: ReadonlySet<string>): { container: string; record: string } | undefined {
  const mains = pages.map((page) => mainRegion(page.body, stable));
  const steps = new Map<string, number>();
  for (const main of mains) if (main) steps.set(main.step, (steps.get(main.step) ?? 0) + 1);
  const [record] = [...steps].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0] ?? [];
  if (!record) return undefined;
  const paths = mains.map((main) => (main && main.step === record ? anchorOf(main.container, stable) : undefined));
  for (let length = 1; length <= MAX_ANCHOR_STEPS; length++) {
    const counts = new Map<string, number>();
    paths.forEach((path, index) => {
      if (!path) return;
      const anchor = anchorSuffix(path, length);
      // The anchor must find this page's records and nothing besides them.
      const found = recordsAt(pages[index]!.body, anchor, record, stable);
      if (found.length > 0 && found.every((el) => el.parentNode !== null && mains[index]!.containers.includes(el.parentNode))) counts.set(anchor, (counts.get(anchor) ?? 0) + 1);
    });
    // A short page (a last page of one or two records) shows no list region, yet is a page of the list
    // when the anchor finds its few records in one container: it supports the anchor, not refutes it.
    mains.forEach((main, index) => {
      if (main) return;
      for (const [anchor] of [...counts]) {
        const found = recordsAt(pages[index]!.body, anchor, record, stable);
        if (found.length > 0 && found.length < MIN_RECORDS && found.every((el) => el.parentNode === found[0]!.parentNode)) counts.set(anchor, counts.get(anchor)! + 1);
      }
    });
    const [best] = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (best && best[1] >= pages.length * CONTAINER_SUPPORT) return { container: best[0], record };
  }
  return undefined;
}

export function induceList(roleName: string, samples: readonly SamplePage[], render: RoleRecipe['render'] = 'http'): Induction {
  if (samples.length < 2) return { ok: false, reason: 'too_few_pages', detail: `${samples.length} page(s) of this kind: at least 2 are needed to tell data from template.` };
  const stable = stableTokens(samples);
  const pages: Listed[] = samples.map((page) => {
    const root = parseHtml(page.html);
    return { root, body: root.querySelector('body') ?? root, url: page.url };
  });
  const list = findList(pages, stable);
  if (!list) return { ok: false, reason: 'nothing_varies', detail: `No list of records found in the same place on most of the ${samples.length} sampled pages.` };

  const elements = pages.flatMap((page) => recordsAt(page.body, list.container, list.record, stable));
  const records = elements.map((record) => ({ values: recordValues(record, stable) }));
  const columns = elements[0] ? columnNames(elements[0]) : new Map<number, string>();
  const byKey = new Map<string, { first: RecordValue; order: number; values: string[] }>();
  records.forEach(({ values }) => {
    let order = 0;
    for (const [key, value] of values) {
      const entry = byKey.get(key) ?? { first: value, order: Infinity, values: [] };
      entry.order = Math.min(entry.order, order++);
      entry.values.push(value.value);
      byKey.set(key, entry);
    }
  });
  const mark = decimalMarkOf([...byKey.values()].flatMap((entry) => entry.values));
  const recordClasses = stepClasses(list.record);
  const candidates = [...byKey]
    .filter(([, entry]) => entry.values.length >= records.length * FIELD_SUPPORT && varies(entry.values))
    .sort((a, b) => a[1].order - b[1].order || a[0].localeCompare(b[0]));
  const firstLink = candidates.find(([, entry]) => entry.first.take === 'href')?.[0];
  const fields: FieldRecipe[] = [];
  const names = new Set<string>();
  for (const [key, entry] of candidates) {
    let name = nameOf(entry.first, recordClasses, key === firstLink, columns);
    const type = inferType(entry.values, mark);
    if (!name && type === 'price') name = 'price';
    if (!name) continue;
    for (let suffix = 2; names.has(name); suffix++) name = `${name.replace(/_\d+$/, '')}_${suffix}`;
    names.add(name);
    const { take, path, label } = entry.first;
    fields.push({
      name,
      ...(label ? { label } : {}),
      type,
      required: entry.values.length >= records.length * REQUIRED_SUPPORT,
      sources: [{ kind: 'record', take, path, ...(label ? { label } : {}) }],
    });
  }
  if (fields.length === 0) return { ok: false, reason: 'nothing_varies', detail: `Nothing varies across the ${records.length} records of the ${samples.length} sampled pages.` };

  const shingleCounts = new Map<string, number>();
  for (const page of pages) for (const shingle of pageShingles(page.root)) shingleCounts.set(shingle, (shingleCounts.get(shingle) ?? 0) + 1);
  return {
    ok: true,
    candidates: candidates.length,
    role: {
      role: roleName,
      type: 'list',
      list: { ...list, nextPage: pages.some((page) => nextPageHref(page.root) !== undefined) },
      url: samples[0]!.url,
      urlPatterns: urlPatterns(samples.map((page) => page.url)),
      signature: [...shingleCounts].filter(([, count]) => count >= pages.length * SIGNATURE_SHARE).map(([shingle]) => shingle).sort(),
      stableTokens: [...stable].sort(),
      decimalMark: mark,
      render,
      fields: fields.sort((a, b) => a.name.localeCompare(b.name)),
    },
  };
}

/** Distinct values of a field with few choices (a property type) over many records. */
const ENUM_VALUES = 10;

/**
 * Record values vary from record to record; a label or a button repeated in every record does not.
 * Records are many, so a field with a few values (a type, a small count) still shows it varies.
 */
function varies(values: readonly string[]): boolean {
  const distinct = new Set(values).size;
  return distinct >= 2 && (distinct / values.length >= 0.3 || distinct <= ENUM_VALUES || values.every((value) => /^\d{1,3}$/.test(value.trim())));
}
