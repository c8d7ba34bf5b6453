/**
 * Verification without a human, on pages the induction never saw, with the runtime interpreter itself:
 * - presence: a field is kept when held-out pages give it (required ones on nearly all); one read on
 *   none of them though induced from the sample is a defect, named in the role's detail;
 * - per variant: the held-out pages are grouped by variant of the template (alike as a whole, with or
 *   without structured data); a field no page of one variant gives is kept but not required, and said so;
 * - agreement: where two sources of a field both answer, they must agree, else the later one is left out;
 * - determinism: the same page interpreted twice gives the same JSON;
 * - recognition: every held-out page is recognised as the role (its threshold is learned here).
 * A role with no field left besides its title is not verified. A list kind is verified on its records:
 * most held-out pages must show at least two (a last page may show one), at least three in all (one
 * held-out page of them will do: a list kind of three pages), and a field's presence counts records,
 * not pages.
 */
import { applyRole, similarity, type Applied, type FieldRecipe, type RoleRecipe } from './recipe';
import { parseHtml } from '../outputs/dom';
import { MIN_RECORDS, nextPageHref, templateShingles } from './records';
import { pageShingles, pageSignals, type PageSignals } from './signals';
import type { SamplePage } from './induce';

export type Verification =
  | { ok: true; role: RoleRecipe; detail: string }
  | { ok: false; reason: 'too_few_pages' | 'not_verified'; detail: string };

const PRESENCE_REQUIRED = 0.8;
const PRESENCE_OPTIONAL = 0.3;
const AGREEMENT = 0.9;
const SIMILARITY_MARGIN = 0.1;
const SIMILARITY_FLOOR = 0.5;
/** Held-out pages this alike (tag paths besides rails) are of one variant of the template. */
const SAME_VARIANT = 0.8;
/** A variant is judged on this many held-out pages at least. */
const MIN_VARIANT_PAGES = 2;

const LIST_PAGES_WITH_RECORDS = 0.8;
const LIST_PAGES_IN_FULL = 0.5;

export function verifyRole(role: Omit<RoleRecipe, 'minSimilarity'>, heldOut: readonly SamplePage[]): Verification {
  // A list is verified on its records: one held-out page of them is enough (a kind of three pages).
  if (role.type === 'list' && heldOut.length >= 1) return verifyList(role, heldOut);
  if (heldOut.length < 2) return { ok: false, reason: 'too_few_pages', detail: `${heldOut.length} held-out page(s): at least 2 are needed to verify.` };
  const stable = new Set(role.stableTokens);
  const candidate: RoleRecipe = { ...role, minSimilarity: 0 };
  const signals = heldOut.map((page) => pageSignals(page.html, page.url, stable));
  const runs = heldOut.map((page, index) => applyRole(candidate, page.html, page.url, signals[index]));
  const again = heldOut.map((page) => applyRole(candidate, page.html, page.url));
  if (runs.some((run, index) => JSON.stringify(run.parsed) !== JSON.stringify(again[index]?.parsed))) {
    return { ok: false, reason: 'not_verified', detail: 'The extraction is not deterministic on the held-out pages.' };
  }

  const variants = variantsOf(heldOut, signals);
  const kept: FieldRecipe[] = [];
  const dropped: string[] = [];
  const vanished: string[] = [];
  const partial: string[] = [];
  for (const field of role.fields) {
    const present = runs.filter((run) => run.values.has(field.name)).length / runs.length;
    if (present === 0) {
      vanished.push(field.name);
      continue;
    }
    if (present < (field.required ? PRESENCE_REQUIRED : PRESENCE_OPTIONAL)) {
      dropped.push(`${field.name} (presence ${present.toFixed(2)})`);
      continue;
    }
    const sources = agreeingSources(field, runs);
    // Per variant: a field no page of one variant gives is not required of the kind's pages.
    const missedBy = variants.filter((pages) => pages.length >= MIN_VARIANT_PAGES && pages.every((index) => !runs[index]!.values.has(field.name)));
    if (missedBy.length > 0) partial.push(`${field.name} (not on the ${missedBy.reduce((sum, pages) => sum + pages.length, 0)} held-out pages of ${missedBy.length === 1 ? 'one variant' : `${missedBy.length} variants`})`);
    // One value in the induction sample, several on the held-out pages: it varies after all.
    const { constant, ...rest } = field;
    const heldValues = new Set(runs.flatMap((run) => (run.values.has(field.name) ? [run.values.get(field.name)] : [])));
    kept.push({
      ...rest,
      sources,
      ...(missedBy.length > 0 ? { required: false } : {}),
      ...(constant && heldValues.size <= 1 ? { constant: { ...constant, pages: constant.pages + runs.filter((run) => run.values.has(field.name)).length } } : {}),
    });
  }
  if (!kept.some((field) => field.name !== 'title')) {
    return { ok: false, reason: 'not_verified', detail: `No field held on ${heldOut.length} held-out pages${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}${vanished.length ? `; read on none: ${vanished.join(', ')}` : ''}.` };
  }
  const minSimilarity = threshold(role, signals.map((page) => page.shingles));
  // Confirmed: two of its sources gave the same value on a held-out page (not a variant's anchor standing in for another).
  const twoSources = kept.filter((field) => runs.some((run) => (run.bySource.get(field.name) ?? []).filter((value) => value !== undefined).length >= 2)).length;
  const notes = [
    ...(variants.length > 1 ? [`${variants.length} variants among them`] : []),
    ...(vanished.length ? [`defect: ${vanished.join(', ')} read on none of the ${heldOut.length} held-out pages though induced from the sample`] : []),
    ...(partial.length ? [`optional for a variant: ${partial.join(', ')}`] : []),
    ...(dropped.length ? [`dropped: ${dropped.join(', ')}`] : []),
  ];
  return {
    ok: true,
    role: { ...role, fields: kept, minSimilarity },
    detail: `${kept.length} fields verified on ${heldOut.length} held-out pages (${twoSources} confirmed by two sources)${notes.map((note) => `; ${note}`).join('')}${constantNote(role, kept)}.`,
  };
}

/**
 * A field's sources that agree with the value it answers: a source giving another value than an
 * earlier source on most pages where both answer is left out (a variant's anchor never answers beside
 * the one it stands in for, so it stays).
 */
function agreeingSources(field: FieldRecipe, runs: readonly Applied[]): FieldRecipe['sources'] {
  return field.sources.filter((_, index) => {
    if (index === 0) return true;
    let both = 0;
    let same = 0;
    for (const run of runs) {
      const values = run.bySource.get(field.name) ?? [];
      const earlier = values.slice(0, index).find((value) => value !== undefined);
      const own = values[index];
      if (earlier === undefined || own === undefined) continue;
      both++;
      if (own === earlier) same++;
    }
    return both === 0 || same / both >= AGREEMENT;
  });
}

/**
 * Held-out pages by variant of the kind's template: alike as a whole (tag paths, rails of records left
 * out) and alike in carrying structured data or not. Each variant is a list of page indices.
 */
function variantsOf(pages: readonly SamplePage[], signals: readonly PageSignals[]): number[][] {
  const shapes = pages.map((page) => templateShingles(parseHtml(page.html)));
  const variants: number[][] = [];
  pages.forEach((_, index) => {
    const structured = signals[index]!.structured.length > 0;
    const variant = variants.find((members) => members.some((other) => signals[other]!.structured.length > 0 === structured && jaccard(shapes[other]!, shapes[index]!) >= SAME_VARIANT));
    if (variant) variant.push(index);
    else variants.push([index]);
  });
  return variants;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let both = 0;
  for (const item of a) if (b.has(item)) both++;
  return a.size + b.size === both ? 1 : both / (a.size + b.size - both);
}

/** What the record says of labelled fields that looked constant: how many more pages were read, and what stayed constant. */
function constantNote(role: Omit<RoleRecipe, 'minSimilarity'>, kept: readonly FieldRecipe[]): string {
  if (!role.resampled) return '';
  const still = kept.filter((field) => field.constant).map((field) => `${field.name} (one value on ${field.constant!.pages} pages)`);
  const read = role.resampled.pages > 0 ? `${role.resampled.pages} more pages sampled` : 'no more pages to sample';
  return `; ${role.resampled.fields.join(', ')} had one value on every induction page: ${read}${still.length > 0 ? `; kept as labelled though constant: ${still.join(', ')}` : '; each varies'}`;
}

function threshold(role: Omit<RoleRecipe, 'minSimilarity'>, shingles: ReadonlyArray<ReadonlySet<string>>): number {
  const scores = shingles.map((page) => similarity(role, page));
  return Math.max(SIMILARITY_FLOOR, Math.round((Math.min(...scores) - SIMILARITY_MARGIN) * 100) / 100);
}

function verifyList(role: Omit<RoleRecipe, 'minSimilarity'>, heldOut: readonly SamplePage[]): Verification {
  const candidate: RoleRecipe = { ...role, minSimilarity: 0 };
  const roots = heldOut.map((page) => parseHtml(page.html));
  const runs = heldOut.map((page, index) => applyRole(candidate, roots[index]!, page.url));
  const again = heldOut.map((page) => applyRole(candidate, page.html, page.url));
  if (runs.some((run, index) => JSON.stringify(run.parsed) !== JSON.stringify(again[index]?.parsed))) {
    return { ok: false, reason: 'not_verified', detail: 'The extraction is not deterministic on the held-out pages.' };
  }
  const records = runs.flatMap((run) => run.items ?? []);
  const listed = runs.filter((run) => (run.items?.length ?? 0) >= 2).length;
  // A last page of one record, found in the learned container, is a short page of the list: it counts
  // as found as long as most held-out pages show the list in full.
  const short = runs.filter((run) => run.items?.length === 1).length;
  if (listed + short < heldOut.length * LIST_PAGES_WITH_RECORDS || listed < heldOut.length * LIST_PAGES_IN_FULL || records.length < MIN_RECORDS) {
    return { ok: false, reason: 'not_verified', detail: `The list was found on ${listed} of ${heldOut.length} held-out pages${short ? ` (and one record on ${short} more)` : ''}.` };
  }
  const kept: FieldRecipe[] = [];
  const dropped: string[] = [];
  const vanished: string[] = [];
  for (const field of role.fields) {
    const present = records.filter((item) => item.has(field.name)).length / records.length;
    if (present === 0) vanished.push(field.name);
    else if (present < (field.required ? PRESENCE_REQUIRED : PRESENCE_OPTIONAL)) dropped.push(`${field.name} (presence ${present.toFixed(2)})`);
    else kept.push(field);
  }
  const defect = vanished.length ? `; defect: ${vanished.join(', ')} read in none of the ${records.length} held-out records though induced from the sample` : '';
  if (kept.length < 2) {
    return { ok: false, reason: 'not_verified', detail: `Fewer than 2 record fields held on ${records.length} records of ${heldOut.length} held-out pages${defect}${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}.` };
  }
  return {
    ok: true,
    // The held-out pages may link a next page where the induction pages (last pages, say) did not.
    role: { ...role, fields: kept, minSimilarity: threshold(role, roots.map((root) => pageShingles(root))), ...(role.list ? { list: { ...role.list, nextPage: role.list.nextPage || roots.some((root) => nextPageHref(root) !== undefined) } } : {}) },
    detail: `${kept.length} record fields verified on ${records.length} records of ${heldOut.length} held-out pages${defect}${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}.`,
  };
}
