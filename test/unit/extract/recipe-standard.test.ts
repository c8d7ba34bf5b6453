/**
 * Recipes are data: a verified role survives being stored (JSON out and back) and reads the same values
 * afterwards; `extract_fields` projects them; `extract=standard` maps them to the canonical real-estate
 * schema, for the sites that are real estate and for none of the others.
 */
import { expect } from 'chai';
import { applyRole, classify, induceRole, pageSignals, project, standardMapping, STANDARD_FIELDS, toStandard } from '../../../engine/extract';
import { ALGORITHM_VERSION, servesVertical, type DomainRecipe, type RoleRecipe } from '../../../engine/extract/recipe-data';
import { acmeHomes, casaHogar, homesDirect, immoHaus, nextProp, shopWidgets, type GeneratedSite } from '../../fixtures/extract-sites/sites';
import { jobBoard, meubleLoc, priceBlocks, slashCars } from '../../fixtures/extract-sites/classes';
import { learnDetail, learnList, truthOf, urlOf } from './pages';

const detailOf = (site: GeneratedSite): RoleRecipe => learnDetail(site, site.details.slice(0, 8), site.details.slice(8, 12));
const stored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;


describe('Extract recipes: stored and read back', () => {
  it('a detail role read back from JSON is the same role and reads the same values on every page', () => {
    for (const site of [acmeHomes(), nextProp(), immoHaus()]) {
      const role = detailOf(site);
      const back = stored(role);
      expect(back, site.host).to.deep.equal(role);
      for (const path of site.details) {
        const html = site.pages.get(path)!.html;
        expect(applyRole(back, html, urlOf(site, path)).parsed, `${site.host}${path}`).to.deep.equal(applyRole(role, html, urlOf(site, path)).parsed);
      }
    }
  });

  it('a domain recipe of a detail and a list kind, read back from JSON, classifies and reads every page', () => {
    const site = acmeHomes();
    const detail = detailOf(site);
    const list = learnList(site, site.lists!.slice(0, 2), site.lists!.slice(2));
    const recipe: DomainRecipe = { domain: 'acme-homes.test', version: 1, algorithm: ALGORITHM_VERSION, created_at: '2026-01-01T00:00:00.000Z', verticals: ['real_estate'], roles: [detail, list] };
    const back = stored(recipe);
    for (const path of [...site.details, ...site.lists!]) {
      const html = site.pages.get(path)!.html;
      const role = classify(back, urlOf(site, path), pageSignals(html, urlOf(site, path)));
      expect(role?.role, path).to.equal(site.lists!.includes(path) ? list.role : detail.role);
      expect(applyRole(role!, html, urlOf(site, path)).parsed, path).to.deep.equal(truthOf(site, path));
    }
  });

  it('a role stored without `type` (an older recipe) is a detail kind', () => {
    const site = immoHaus();
    const { type: _type, ...older } = stored(detailOf(site));
    const path = site.details[19]!;
    expect(applyRole(older, site.pages.get(path)!.html, urlOf(site, path)).parsed).to.deep.equal(truthOf(site, path));
  });
});

describe('Extract recipes: extract_fields', () => {
  it('projects dotted paths of a detail page and through the items of a list page; unknown paths are reported', () => {
    const site = acmeHomes();
    const path = site.details[20]!;
    const parsed = applyRole(detailOf(site), site.pages.get(path)!.html, urlOf(site, path)).parsed;
    const truth = truthOf(site, path);
    expect(project(parsed, ['price', 'city', 'lot_size', 'price.amount'])).to.deep.equal({ value: { price: truth.price, city: truth.city }, unknown: ['lot_size', 'price.amount'] });

    const list = learnList(site, site.lists!.slice(0, 2), site.lists!.slice(2));
    const page = site.lists![0]!;
    const items = applyRole(list, site.pages.get(page)!.html, urlOf(site, page)).parsed;
    const records = truthOf(site, page).items as Array<Record<string, unknown>>;
    expect(project(items, ['items.price', 'next_page'])).to.deep.equal({ value: { items: records.map((record) => ({ price: record.price })), next_page: 'http://acme-homes.test/search?page=2' }, unknown: [] });
  });
});

describe('Extract standard: the real-estate schema', () => {
  const mappings: Array<{ make: () => GeneratedSite; standard: Record<string, string> | undefined }> = [
    { make: () => acmeHomes(), standard: { listing_price: 'price', bedrooms: 'bedrooms', bathrooms: 'bathrooms', area: 'living_area', year_built: 'year_built', property_type: 'property_type', title: 'title' } },
    { make: () => immoHaus(), standard: { listing_price: 'kaufpreis', area: 'wohnflache', year_built: 'baujahr', title: 'title' } },
    { make: () => casaHogar(), standard: { listing_price: 'precio', bedrooms: 'habitaciones', bathrooms: 'banos', title: 'title' } },
    { make: () => nextProp(), standard: { listing_price: 'asking_price', bedrooms: 'beds', title: 'headline' } },
    { make: () => homesDirect(), standard: { listing_price: 'price', bedrooms: 'bedrooms', bathrooms: 'bathrooms', area: 'floor_area', title: 'title' } },
    { make: () => priceBlocks(), standard: { listing_price: 'price', bedrooms: 'bedrooms', title: 'title' } },
    // Not real estate: products, cars and jobs have a price (or a salary) but no bedrooms or area.
    { make: () => shopWidgets(), standard: undefined },
    { make: () => slashCars(), standard: undefined },
    { make: () => jobBoard(), standard: undefined },
  ];
  for (const { make, standard } of mappings) {
    const site = make();
    it(`${site.host}: ${standard ? 'maps its native fields' : 'is not real estate'}`, () => {
      expect(standardMapping(detailOf(site).fields)).to.deep.equal(standard);
    });
  }

  it('answers the canonical object of a held-out page from its native values', () => {
    const site = casaHogar();
    const role = { ...detailOf(site), standard: standardMapping(detailOf(site).fields)! };
    const path = site.details[17]!;
    const truth = truthOf(site, path);
    expect(toStandard(role, applyRole(role, site.pages.get(path)!.html, urlOf(site, path)))).to.deep.equal({ listing_price: truth.precio, bedrooms: truth.habitaciones, bathrooms: truth.banos, title: truth.title });
    expect(Object.keys(toStandard(role, applyRole(role, site.pages.get(path)!.html, urlOf(site, path)))!).every((key) => STANDARD_FIELDS.includes(key))).to.equal(true);
  });

  it('maps a list kind per record (homes-direct area pages)', () => {
    const site = homesDirect();
    const list = learnList(site, site.lists!.slice(0, 3), site.lists!.slice(3));
    const standard = standardMapping(list.fields);
    expect(standard).to.deep.equal({ listing_price: 'price', bedrooms: 'beds', property_type: 'type', title: 'title' });
    const page = site.lists![5]!;
    const records = truthOf(site, page).items as Array<Record<string, unknown>>;
    expect(toStandard({ standard }, applyRole(list, site.pages.get(page)!.html, urlOf(site, page)))).to.deep.equal({
      items: records.map((record) => ({ listing_price: record.price, bedrooms: record.beds, property_type: record.type, title: record.title })),
    });
  });

  it('a role without a mapping answers no canonical object, and a recipe serves the vertical by what its roles map', () => {
    const site = slashCars();
    const role = detailOf(site);
    expect(toStandard(role, applyRole(role, site.pages.get(site.details[0]!)!.html, urlOf(site, site.details[0]!)))).to.equal(undefined);
    expect(servesVertical({ verticals: [], roles: [role] }, 'real_estate')).to.equal(false);
    const homes = acmeHomes();
    const mapped = detailOf(homes);
    expect(servesVertical(stored({ verticals: [], roles: [{ ...mapped, standard: standardMapping(mapped.fields)! }] }), 'real_estate')).to.equal(true);
  });

  it('a shop whose products have a "Size" (shoe sizes) is not real estate', () => {
    // `size` beside a price alone is no floor area (nor is a `bed_size` a count of bedrooms).
    const site = shopWidgets();
    const pages = site.details.slice(0, 8).map((path, index) => ({ url: urlOf(site, path), html: site.pages.get(path)!.html.replace('<li>In stock:', `<li>Size: ${36 + (index % 8)}</li><li>In stock:`) }));
    const induced = induceRole('product', pages);
    if (!induced.ok) throw new Error(induced.detail);
    expect(induced.role.fields.find((field) => field.name === 'size')?.type).to.equal('int');
    expect(standardMapping(induced.role.fields)).to.equal(undefined);
  });

  it('meuble-loc (French rentals: Loyer, Pièces, Surface) maps to the real-estate schema', () => {
    // Rent as the French write it (loyer) is the listing price, as rent and Miete are.
    expect(standardMapping(detailOf(meubleLoc()).fields)).to.deep.include({ listing_price: 'loyer', area: 'surface' });
  });
});
