import { expect } from 'chai';
import { compareSnapshots, probeProfile, snapshotOf, type Comparison, type Snapshot } from '../../../engine/changes';
import { applyCssRules, toMarkdown } from '../../../engine/outputs';
import type { NoiseSet } from '../../fixtures/changes/noise';
import { EDITS, PRODUCT_RULES, pageModel, renderPage, rotates, type PageModel } from '../../fixtures/changes/pages';
import { seeded } from '../../helpers/random';

const snap = (model: PageModel, render: number): Snapshot => snapshotOf(toMarkdown(renderPage(model, render), model.url));

/** Lines removed and added by a unified diff (headers left out). */
function changedLines(comparison: Comparison): { minus: string[]; plus: string[] } {
  const lines = (comparison.diff?.text ?? '').split('\n');
  return {
    minus: lines.filter((line) => line.startsWith('-') && !line.startsWith('---')).map((line) => line.slice(1)),
    plus: lines.filter((line) => line.startsWith('+') && !line.startsWith('+++')).map((line) => line.slice(1)),
  };
}

/** Applies a unified diff to `lines` (hunks in order, context checked). */
function patch(lines: readonly string[], diff: string): string[] {
  const out: string[] = [];
  let at = 0;
  const rows = diff.split('\n');
  for (let r = 2; r < rows.length; r++) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(rows[r] as string);
    if (!header) throw new Error(`not a hunk header: ${rows[r]}`);
    const count = header[2] === undefined ? 1 : Number(header[2]);
    const start = count === 0 ? Number(header[1]) : Number(header[1]) - 1;
    while (at < start) out.push(lines[at++] as string);
    for (r++; r < rows.length && !(rows[r] as string).startsWith('@@'); r++) {
      const row = rows[r] as string;
      if (row.startsWith('+')) out.push(row.slice(1));
      else {
        expect(lines[at], 'context or removed line').to.equal(row.slice(1));
        if (row.startsWith(' ')) out.push(row.slice(1));
        at++;
      }
    }
    r--;
  }
  while (at < lines.length) out.push(lines[at++] as string);
  return out;
}

describe('change tracking: comparing versions', () => {
  it('calls the first version of a URL new', () => {
    const model = pageModel(1, 0);
    expect(compareSnapshots(undefined, snap(model, 1))).to.deep.equal({ status: 'new', observed: [] });
  });

  for (const set of ['tune', 'holdout'] as NoiseSet[]) {
    it(`finds a re-render with new noise the same, on every page without rotating text (${set} noise formats)`, () => {
      let pages = 0;
      for (let i = 0; pages < 40; i++) {
        const model = pageModel(7, i, set);
        if (rotates(model)) continue;
        pages++;
        const comparison = compareSnapshots(snap(model, 1), snap(model, 2));
        expect(comparison.status, `page ${i}: ${comparison.diff?.text}`).to.equal('same');
        // Each answer's noise differs, and the diff says what it ignored.
        const kinds = new Set(comparison.diff?.ignored.map((run) => run.kind));
        for (const kind of ['timestamp', 'cache_buster', 'tracking', 'counter']) expect(kinds, `page ${i}`).to.include(kind);
        expect(comparison.diff?.text).to.equal('');
      }
    });

    it(`finds pages with rotating text the same once a probe of a few fetches has seen them (${set})`, () => {
      let pages = 0;
      for (let i = 0; pages < 15; i++) {
        const model = pageModel(8, i, set);
        if (!rotates(model)) continue;
        pages++;
        const profile = probeProfile(undefined, [1, 2, 3, 4, 5, 6].map((render) => snap(model, render)));
        const comparison = compareSnapshots(snap(model, 11), snap(model, 12), { profile });
        expect(comparison.status, `page ${i}: ${comparison.diff?.text}`).to.equal('same');
      }
    });
  }

  it('calls each real edit changed, with a diff of exactly that edit and the field diff', () => {
    const next = seeded(3);
    let checked = 0;
    for (let i = 0; i < 24; i++) {
      const model = pageModel(9, i, 'all');
      const profile = probeProfile(undefined, [1, 2, 3, 4, 5, 6].map((render) => snap(model, render)));
      const beforeHtml = renderPage(model, 20);
      const before = snapshotOf(toMarkdown(beforeHtml, model.url));
      for (const edit of EDITS) {
        if (!edit.applies(model)) continue;
        const result = edit.apply(model, next);
        const afterHtml = renderPage(result.model, 21 + i);
        const fields = model.price ? { previous: applyCssRules(beforeHtml, model.url, PRODUCT_RULES), current: applyCssRules(afterHtml, model.url, PRODUCT_RULES) } : undefined;
        const comparison = compareSnapshots(before, snapshotOf(toMarkdown(afterHtml, model.url)), { profile, ...(fields ? { fields } : {}) });
        const where = `page ${i}, ${edit.name}:\n${comparison.diff?.text}`;
        expect(comparison.status, where).to.equal('changed');
        const { minus, plus } = changedLines(comparison);
        for (const text of result.removed) expect(minus.some((line) => line.includes(text)), where).to.equal(true);
        for (const text of result.added) expect(plus.some((line) => line.includes(text)), where).to.equal(true);
        expect(comparison.diff?.removed, where).to.equal(result.removed.length);
        expect(comparison.diff?.added, where).to.equal(result.added.length);
        if (fields) expect(Object.keys(comparison.diff?.fields ?? {}).sort(), where).to.deep.equal([...(result.fields ?? [])].sort());
        checked++;
      }
    }
    expect(checked).to.be.greaterThan(200);
  });

  it('reports a changed field with its values as they were', () => {
    const model = pageModel(9, 0, 'all');
    const product = { ...model, price: '$10.00', stock: 4 };
    const edited = { ...product, price: '$12.50' };
    const previous = applyCssRules(renderPage(product, 1), model.url, PRODUCT_RULES);
    const current = applyCssRules(renderPage(edited, 2), model.url, PRODUCT_RULES);
    const comparison = compareSnapshots(snap(product, 1), snap(edited, 2), { fields: { previous, current } });
    expect(comparison.diff?.fields).to.deep.equal({ price: { previous: '$10.00', current: '$12.50' } });
  });

  it('writes a unified diff that turns the previous Markdown into the current one', () => {
    const next = seeded(17);
    for (let i = 0; i < 10; i++) {
      const model = pageModel(10, i, 'all');
      let edited = model;
      for (const edit of EDITS.filter((e) => e.applies(model) && e.name !== 'link target changed')) edited = edit.apply(edited, next).model;
      // One render seed for both: no noise differs, so every differing line is shown.
      const previous = snapshotOf(toMarkdown(renderPage(model, 5), model.url));
      const current = snapshotOf(toMarkdown(renderPage(edited, 5), model.url));
      const comparison = compareSnapshots(previous, current, { labels: { previous: 'v1', current: 'v2' } });
      expect(comparison.diff?.text.startsWith('--- v1\n+++ v2\n@@ ')).to.equal(true);
      expect(patch(previous.lines, comparison.diff?.text ?? '')).to.deep.equal(current.lines);
    }
  });

  it('takes random runs drawn anew in place for noise, and an edited code for a change', () => {
    // Draws the rules do not take for random on their own (long runs of one case).
    const base = '# Order\n\nEdge UJEPPHUqcpUWUVOt68\n\nTotal $10';
    const redrawn = '# Order\n\nEdge NEIKFZSYUhfnVjo232\n\nTotal $10';
    const edited = '# Order\n\nEdge UJEPPHUqcpUWUVOt69\n\nTotal $10';
    expect(snapshotOf(base).fingerprint).to.not.equal(snapshotOf(redrawn).fingerprint);
    const same = compareSnapshots(snapshotOf(base), snapshotOf(redrawn));
    expect(same.status).to.equal('same');
    expect(same.diff?.ignored).to.deep.equal([{ kind: 'token', count: 1 }]);
    expect(compareSnapshots(snapshotOf(base), snapshotOf(edited)).status).to.equal('changed');
  });

  it('keeps diffs of big versions bounded, and says so', () => {
    const lines = (seed: number): string => Array.from({ length: 4000 }, (_, k) => `Line ${k} of version ${seed}, a sentence long enough to take some room.`).join('\n\n');
    const comparison = compareSnapshots(snapshotOf(lines(1)), snapshotOf(lines(2)), { maxDiffChars: 10_000 });
    expect(comparison.status).to.equal('changed');
    expect(comparison.diff?.truncated).to.equal(true);
    expect(comparison.diff?.text.length).to.be.lessThan(10_200);
    expect(comparison.diff?.added).to.equal(4000);
    expect(comparison.diff?.removed).to.equal(4000);
  });
});
