/**
 * Verification without a human, on pages the induction never saw, with the runtime interpreter itself:
 * - presence: a field is kept when held-out pages give it (required ones on nearly all);
 * - agreement: where two sources of a field both answer, they must agree, else only the first is kept;
 * - determinism: the same page interpreted twice gives the same JSON;
 * - recognition: every held-out page is recognised as the role (its threshold is learned here).
 * A role with no field left besides its title is not verified. A list kind is verified on its records:
 * most held-out pages must show at least two (a last page may show one), at least three in all (one
 * held-out page of them will do: a list kind of three pages), and a field's presence counts records,
 * not pages.
 */
import { applyRole, similarity, type FieldRecipe, type RoleRecipe } from './recipe';
import { parseHtml } from '../outputs/dom';
import { MIN_RECORDS } from './records';
import { pageShingles, pageSignals } from './signals';
import type { SamplePage } from './induce';

export type Verification =
  | { ok: true; role: RoleRecipe; detail: string }
  | { ok: false; reason: 'too_few_pages' | 'not_verified'; detail: string };

const PRESENCE_REQUIRED = 0.8;
const PRESENCE_OPTIONAL = 0.3;
const AGREEMENT = 0.9;
const SIMILARITY_MARGIN = 0.1;
const SIMILARITY_FLOOR = 0.5;

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

  const kept: FieldRecipe[] = [];
  const dropped: string[] = [];
  for (const field of role.fields) {
    const present = runs.filter((run) => run.values.has(field.name)).length / runs.length;
    if (present < (field.required ? PRESENCE_REQUIRED : PRESENCE_OPTIONAL)) {
      dropped.push(`${field.name} (presence ${present.toFixed(2)})`);
      continue;
    }
    let sources = field.sources;
    if (sources.length > 1) {
      let both = 0;
      let same = 0;
      for (const run of runs) {
        const values = run.bySource.get(field.name) ?? [];
        if (values.length < 2) continue;
        both++;
        if (values.every((value) => value === values[0])) same++;
      }
      if (both > 0 && same / both < AGREEMENT) sources = sources.slice(0, 1);
    }
    // One value in the induction sample, several on the held-out pages: it varies after all.
    const { constant, ...rest } = field;
    const heldValues = new Set(runs.flatMap((run) => (run.values.has(field.name) ? [run.values.get(field.name)] : [])));
    kept.push({ ...rest, sources, ...(constant && heldValues.size <= 1 ? { constant: { ...constant, pages: constant.pages + runs.filter((run) => run.values.has(field.name)).length } } : {}) });
  }
  if (!kept.some((field) => field.name !== 'title')) {
    return { ok: false, reason: 'not_verified', detail: `No field held on ${heldOut.length} held-out pages${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}.` };
  }
  const minSimilarity = threshold(role, signals.map((page) => page.shingles));
  const twoSources = kept.filter((field) => field.sources.length > 1).length;
  return {
    ok: true,
    role: { ...role, fields: kept, minSimilarity },
    detail: `${kept.length} fields verified on ${heldOut.length} held-out pages (${twoSources} confirmed by two sources)${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}${constantNote(role, kept)}.`,
  };
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
  for (const field of role.fields) {
    const present = records.filter((item) => item.has(field.name)).length / records.length;
    if (present < (field.required ? PRESENCE_REQUIRED : PRESENCE_OPTIONAL)) dropped.push(`${field.name} (presence ${present.toFixed(2)})`);
    else kept.push(field);
  }
  if (kept.length < 2) {
    return { ok: false, reason: 'not_verified', detail: `Fewer than 2 record fields held on ${records.length} records of ${heldOut.length} held-out pages${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}.` };
  }
  return {
    ok: true,
    role: { ...role, fields: kept, minSimilarity: threshold(role, roots.map((root) => pageShingles(root))) },
    detail: `${kept.length} record fields verified on ${records.length} records of ${heldOut.length} held-out pages${dropped.length ? `; dropped: ${dropped.join(', ')}` : ''}.`,
  };
}
