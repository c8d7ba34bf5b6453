/**
 * Page kinds of the generated sites from their URLs and the structure of their pages, and the role a
 * prepared recipe gives each page of the site at request time.
 */
import { expect } from 'chai';
import { parseRobots } from '../../../engine/robots';
import { belongs, classify, kindsOf, pageSignals, pageStructure, sampleOrder, shapeBalanced, shapeOf, sitemapLocations, type Kind } from '../../../engine/extract';
import { acmeHomes, homesDirect, immoHaus, type GeneratedSite } from '../../fixtures/extract-sites/sites';
import { jobBoard, slashCars } from '../../fixtures/extract-sites/classes';
import { learnDetail, learnList, urlOf } from './pages';

function kindsOfSite(site: GeneratedSite): Kind[] {
  const paths = [...site.pages.keys()];
  return kindsOf(
    paths.map((path) => urlOf(site, path)),
    paths.map((path) => pageStructure(site.pages.get(path)!.html, urlOf(site, path))),
  );
}

const summary = (kinds: readonly Kind[]) => kinds.map((kind) => ({ role: kind.role, type: kind.type, urls: kind.urls.length, structure: kind.structure !== undefined }));

describe('Extract kinds: the generated sites', () => {
  it('acme-homes: property pages (detail) and search pages (list); home and about are no kind', () => {
    const site = acmeHomes();
    const kinds = kindsOfSite(site);
    expect(summary(kinds)).to.deep.equal([
      { role: 'property_detail', type: 'detail', urls: 24, structure: false },
      { role: 'search_list', type: 'list', urls: 4, structure: false },
    ]);
    expect(new Set(kinds[0]!.urls)).to.deep.equal(new Set(site.details.map((path) => urlOf(site, path))));
    expect(new Set(kinds[1]!.urls)).to.deep.equal(new Set(site.lists!.map((path) => urlOf(site, path))));
  });

  it('homes-direct: one flat URL shape holding two templates, told apart by structure', () => {
    const site = homesDirect();
    const kinds = kindsOfSite(site);
    expect(summary(kinds)).to.deep.equal([
      { role: 'page_detail', type: 'detail', urls: 37, structure: true },
      { role: 'page_list', type: 'list', urls: 37, structure: true },
    ]);
    const [detail, list] = kinds as [Kind, Kind];
    // Each kind's representative page is one of its own.
    expect(site.details.map((path) => urlOf(site, path))).to.include(detail.urls[0]);
    expect(site.lists!.map((path) => urlOf(site, path))).to.include(list.urls[0]);
    // Sampling keeps each kind's own pages only.
    for (const path of [...site.details, ...site.lists!]) {
      const structure = pageStructure(site.pages.get(path)!.html, urlOf(site, path));
      const isList = site.lists!.includes(path);
      expect(belongs(detail, structure), path).to.equal(!isList);
      expect(belongs(list, structure), path).to.equal(isList);
    }
    expect(belongs(detail, pageStructure(site.pages.get('/contact')!.html, urlOf(site, '/contact')))).to.equal(false);
  });

  it('job-board: job pages, and the search and category lists as two list kinds', () => {
    const kinds = kindsOfSite(jobBoard());
    expect(summary(kinds)).to.deep.equal([
      { role: 'job_detail', type: 'detail', urls: 30, structure: false },
      { role: 'search_list', type: 'list', urls: 8, structure: true },
      { role: 'jobs_list', type: 'list', urls: 5, structure: false },
    ]);
  });

  it('slash-cars and immo-haus: one detail kind each', () => {
    expect(summary(kindsOfSite(slashCars()))).to.deep.equal([{ role: 'cars_detail', type: 'detail', urls: 24, structure: false }]);
    expect(summary(kindsOfSite(immoHaus()))).to.deep.equal([{ role: 'expose_detail', type: 'detail', urls: 20, structure: false }]);
  });

  it('gives the same kinds for the same pages in any order', () => {
    const site = jobBoard();
    const paths = [...site.pages.keys()].reverse();
    const reversed = kindsOf(
      paths.map((path) => urlOf(site, path)),
      paths.map((path) => pageStructure(site.pages.get(path)!.html, urlOf(site, path))),
    );
    expect(reversed).to.deep.equal(kindsOfSite(site));
  });
});

describe('Extract classification: the role of a page at request time', () => {
  it('homes-direct: a recipe of both kinds recognises every page of the site as its own kind', () => {
    const site = homesDirect();
    const detail = learnDetail(site, site.details.slice(0, 8), site.details.slice(8, 12));
    const list = learnList(site, site.lists!.slice(0, 3), site.lists!.slice(3));
    const recipe = { roles: [detail, list] };
    for (const path of site.details) expect(classify(recipe, urlOf(site, path), pageSignals(site.pages.get(path)!.html, urlOf(site, path)))?.role, path).to.equal(detail.role);
    for (const path of site.lists!) expect(classify(recipe, urlOf(site, path), pageSignals(site.pages.get(path)!.html, urlOf(site, path)))?.role, path).to.equal(list.role);
  });

  it('acme-homes: the home and about pages are no role of the recipe', () => {
    const site = acmeHomes();
    const recipe = { roles: [learnDetail(site, site.details.slice(0, 8), site.details.slice(8, 12))] };
    for (const path of ['/', '/about']) expect(classify(recipe, urlOf(site, path), pageSignals(site.pages.get(path)!.html, urlOf(site, path))), path).to.equal(undefined);
  });

  it("slash-cars: a car page is recognised by its URL with or without the site's trailing slash", () => {
    const site = slashCars();
    const role = learnDetail(site, site.details.slice(0, 8), site.details.slice(8, 12));
    expect(role.urlPatterns).to.deep.equal(['^/cars/[^/]+/$']);
    const path = site.details[20]!;
    const signals = pageSignals(site.pages.get(path)!.html, urlOf(site, path));
    expect(classify({ roles: [role] }, urlOf(site, path), signals)?.role).to.equal(role.role);
    expect(classify({ roles: [role] }, urlOf(site, path.replace(/\/$/, '')), signals)?.role).to.equal(role.role);
  });
});

describe('Extract discovery on the generated sites', () => {
  it('reads the sitemap a robots.txt names, and every page it lists', () => {
    const site = jobBoard();
    expect(parseRobots(site.robots!, 'Fetchplane').sitemaps).to.deep.equal(['http://job-board.test/sitemap.xml']);
    const locations = sitemapLocations(site.sitemap!);
    expect(locations).to.have.length(site.pages.size);
    expect(locations).to.include('http://job-board.test/search/?q=senior&page=2');
  });

  it('groups URLs by shape and samples them in an order fixed by the seed', () => {
    const site = acmeHomes();
    expect(shapeOf(urlOf(site, site.details[0]!))).to.deep.include({ key: '2|property|', first: 'property', depth: 2, query: false });
    expect(shapeOf(urlOf(site, '/search?page=2'))).to.deep.include({ key: '1||?', depth: 1, query: true });
    // A list's next pages are of its first page's shape: only the paging key differs.
    expect(shapeOf('http://auto-lot.test/search?make=ford&page=2').key).to.equal(shapeOf('http://auto-lot.test/search?make=ford').key);
    const urls = [...site.pages.keys()].map((path) => urlOf(site, path));
    expect(sampleOrder(urls, 'acme|1')).to.deep.equal(sampleOrder([...urls].reverse(), 'acme|1'));
    expect(sampleOrder(urls, 'acme|1')).to.not.deep.equal(sampleOrder(urls, 'acme|2'));
    // One URL of each shape comes first: the home page, the about page, a search page and a property page.
    const first = shapeBalanced(urls, 4, 'acme|1');
    expect(new Set(first.map((url) => shapeOf(url).key)).size).to.equal(4);
  });
});
