/**
 * List kinds on the generated sites: induced on some list pages, verified on the others, read on all of
 * them. Every page's records (and `next_page` where the site links one) must equal its truth.
 */
import { expect } from 'chai';
import { applyRole, induceList, verifyRole } from '../../../engine/extract';
import type { RoleRecipe } from '../../../engine/extract/recipe-data';
import { acmeHomes, homesDirect, immoHaus, type GeneratedSite } from '../../fixtures/extract-sites/sites';
import { jobBoard } from '../../fixtures/extract-sites/classes';
import { f1, score } from '../../fixtures/extract-sites/score';
import { learnList, samples, truthOf, urlOf } from './pages';

const describeRole = (role: RoleRecipe) => ({
  list: role.list,
  fields: Object.fromEntries(role.fields.map((field) => [field.name, `${field.type}:${field.sources.map((source) => (source.kind === 'record' ? `${source.take}@${source.path}` : source.kind)).join('+')}`])),
});


function readsEveryPage(site: GeneratedSite, role: RoleRecipe, paths: readonly string[]): void {
  const counts = { tp: 0, fp: 0, fn: 0 };
  for (const path of paths) {
    const applied = applyRole(role, site.pages.get(path)!.html, urlOf(site, path));
    expect(applied.parsed, path).to.deep.equal(truthOf(site, path));
    expect(applied.missing, path).to.deep.equal([]);
    const page = score(applied.parsed, truthOf(site, path));
    counts.tp += page.tp;
    counts.fp += page.fp;
    counts.fn += page.fn;
  }
  expect(f1(counts)).to.equal(1);
}

describe('Extract induction: list pages of the generated sites', () => {
  it('acme-homes search results: records in `ul.results`, their fields named by class, `next_page` from rel=next', () => {
    const site = acmeHomes();
    const lists = site.lists!;
    expect(lists).to.have.length(4);
    const role = learnList(site, lists.slice(0, 2), lists.slice(2));
    expect(describeRole(role)).to.deep.equal({
      list: { container: 'ul.results', record: 'li.result', nextPage: true },
      fields: { beds: 'int:text@span.result-beds', price: 'price:text@span.result-price', title: 'text:text@a.result-title', url: 'url:href@a.result-title' },
    });
    readsEveryPage(site, role, lists);
    // The last page links no next page: none is answered.
    const last = applyRole(role, site.pages.get(lists[3]!)!.html, urlOf(site, lists[3]!));
    expect(last.parsed).to.not.have.property('next_page');
    expect(applyRole(role, site.pages.get(lists[0]!)!.html, urlOf(site, lists[0]!)).parsed.next_page).to.equal('http://acme-homes.test/search?page=2');
  });

  it('homes-direct area pages: cards under `section.listing-grid`, no pagination', () => {
    const site = homesDirect();
    const lists = site.lists!;
    const role = learnList(site, lists.slice(0, 3), lists.slice(3));
    expect(describeRole(role)).to.deep.equal({
      list: { container: 'section.listing-grid', record: 'article.card', nextPage: false },
      fields: {
        beds: 'int:text@p.card-meta>span.card-beds',
        price: 'price:text@p.card-price',
        title: 'text:text@a.card-link>h3.card-title',
        type: 'text:text@p.card-meta>span.card-type',
        url: 'url:href@a.card-link',
      },
    });
    readsEveryPage(site, role, lists);
  });

  it("homes-direct listing pages: the aside's cards are not the area list's records", () => {
    const site = homesDirect();
    const role = learnList(site, site.lists!.slice(0, 3), site.lists!.slice(3));
    const detail = site.details[0]!;
    const applied = applyRole(role, site.pages.get(detail)!.html, urlOf(site, detail));
    // The "More in …" block holds the same cards in an `aside`, not in the learned container.
    expect(applied.items).to.deep.equal([]);
    expect(applied.missing).to.deep.equal(['items']);
  });

  it('job-board category lists: cards with a class per field, the leading word of the record class dropped', () => {
    const site = jobBoard();
    const categories = site.lists!.filter((path) => path.startsWith('/jobs/'));
    expect(categories).to.have.length(5);
    const role = learnList(site, categories.slice(0, 3), categories.slice(3));
    expect(describeRole(role)).to.deep.equal({
      list: { container: 'ul.jobs', record: 'li.job-card', nextPage: false },
      fields: {
        company: 'text:text@span.job-company',
        location: 'text:text@span.job-location',
        salary: 'price:text@span.job-salary',
        title: 'text:text@a.job-title',
        url: 'url:href@a.job-title',
      },
    });
    readsEveryPage(site, role, categories);
  });

  it('job-board search results: a `Salary:` label inside the record, a heading link as title, next pages', () => {
    const site = jobBoard();
    const search = site.lists!.filter((path) => path.startsWith('/search/'));
    expect(search).to.have.length(8);
    const role = learnList(site, search.slice(0, 3), search.slice(3));
    expect(describeRole(role)).to.deep.equal({
      list: { container: 'div.results', record: 'div.hit', nextPage: true },
      fields: { company: 'text:text@p.hit-company', salary: 'price:label@p.hit-salary', title: 'text:text@h3>a', url: 'url:href@h3>a' },
    });
    expect(role.fields.find((field) => field.name === 'salary')?.label).to.equal('Salary');
    readsEveryPage(site, role, search);
    const withNext = search.filter((path) => 'next_page' in truthOf(site, path));
    expect(withNext).to.have.length(5);
  });

  it('reads a last page of fewer records than a list needs to be found (one or two) with the learned recipe', () => {
    const site = jobBoard(6, 2);
    const search = site.lists!.filter((path) => path.startsWith('/search/'));
    const full = search.filter((path) => (truthOf(site, path).items as unknown[]).length >= 3);
    const short = search.filter((path) => (truthOf(site, path).items as unknown[]).length < 3);
    expect(short.length).to.be.greaterThan(0);
    const role = learnList(site, full.slice(0, 2), full.slice(2));
    readsEveryPage(site, role, short);
  });

  it('induces a list from a sample that holds a short last page (two records)', () => {
    // job-board seed 2: senior&page=2 holds two records, too few for the page to show a list region;
    // its records sit in the learned container, so it counts for that container, not against it.
    const site = jobBoard(6, 2);
    const search = site.lists!.filter((path) => path.startsWith('/search/'));
    expect((truthOf(site, search[1]!).items as unknown[]).length).to.equal(2);
    const induced = induceList('x', samples(site, search.slice(0, 4)));
    expect(induced.ok, induced.ok ? '' : induced.detail).to.equal(true);
  });

  it('verifies a list on held-out pages one of which is a last page with one record', () => {
    // job-board seed 1: lead&page=2 holds one record, a short last page of the list, not a page without it.
    const site = jobBoard(6, 1);
    const search = site.lists!.filter((path) => path.startsWith('/search/'));
    expect((truthOf(site, search[5]!).items as unknown[]).length).to.equal(1);
    const induced = induceList('x', samples(site, search.slice(0, 3)));
    if (!induced.ok) throw new Error(induced.detail);
    const verified = verifyRole(induced.role, samples(site, search.slice(3)));
    expect(verified.ok, verified.detail).to.equal(true);
  });

  it('refuses a list kind on detail pages (no repeated records in one place) and on too few pages', () => {
    const site = immoHaus();
    expect(induceList('x', samples(site, site.details.slice(0, 4)))).to.deep.include({ ok: false, reason: 'nothing_varies' });
    const acme = acmeHomes();
    expect(induceList('x', samples(acme, acme.lists!.slice(0, 1)))).to.deep.include({ ok: false, reason: 'too_few_pages' });
  });

  it('refuses two list templates mixed in one sample', () => {
    const site = jobBoard();
    const mixed = site.lists!.filter((path) => path.startsWith('/jobs/')).slice(0, 2).concat(site.lists!.filter((path) => path.startsWith('/search/')).slice(0, 3));
    const induced = induceList('x', samples(site, mixed));
    expect(induced).to.deep.include({ ok: false, reason: 'nothing_varies' });
  });

  it("refuses one list template's recipe on the other template's pages", () => {
    const site = jobBoard();
    const categories = site.lists!.filter((path) => path.startsWith('/jobs/'));
    const search = site.lists!.filter((path) => path.startsWith('/search/'));
    const induced = induceList('x', samples(site, categories.slice(0, 3)));
    if (!induced.ok) throw new Error(induced.detail);
    const verified = verifyRole(induced.role, samples(site, search.slice(0, 4)));
    expect(verified).to.deep.equal({ ok: false, reason: 'not_verified', detail: 'The list was found on 0 of 4 held-out pages.' });
  });
});
