/**
 * Detail kinds on the generated sites: induced on 8 pages, verified on 4 others, then read on every
 * remaining page of the site, which neither step saw. Each held-out page must give its truth exactly.
 */
import { expect } from 'chai';
import { applyRole, induceRole, sampleOrder, verifyRole } from '../../../engine/extract';
import type { RoleRecipe } from '../../../engine/extract/recipe-data';
import { acmeHomes, casaHogar, fewPages, homesDirect, immoHaus, nextProp, oddFacts, samePages, shellOnly, shopWidgets, type GeneratedSite } from '../../fixtures/extract-sites/sites';
import { jobBoard, meubleLoc, priceBlocks, slashCars } from '../../fixtures/extract-sites/classes';
import { f1, score } from '../../fixtures/extract-sites/score';
import { learnDetail, samples, truthOf, urlOf } from './pages';

const INDUCE = 8;
const VERIFY = 4;

function learned(site: GeneratedSite): { role: RoleRecipe; heldOut: string[] } {
  const role = learnDetail(site, site.details.slice(0, INDUCE), site.details.slice(INDUCE, INDUCE + VERIFY));
  return { role, heldOut: site.details.slice(INDUCE + VERIFY) };
}

const fieldsOf = (role: RoleRecipe) => Object.fromEntries(role.fields.map((field) => [field.name, `${field.type}:${field.sources.map((source) => source.kind).join('+')}`]));

describe('Extract induction: detail pages of the generated sites', () => {
  const expected: Array<{ make: () => GeneratedSite; fields: Record<string, string> }> = [
    {
      make: () => acmeHomes(),
      fields: {
        bathrooms: 'int:label',
        bedrooms: 'int:label+jsonld',
        city: 'text:label+jsonld',
        living_area: 'int:label',
        price: 'price:label+jsonld',
        property_type: 'text:label',
        title: 'text:title+jsonld',
        url: 'url:jsonld',
        year_built: 'int:label',
      },
    },
    { make: () => immoHaus(), fields: { baujahr: 'int:label', kaufpreis: 'price:label', ort: 'text:label', title: 'text:title', wohnflache: 'int:label', zimmer: 'int:label' } },
    { make: () => casaHogar(), fields: { banos: 'int:label', ciudad: 'text:label', habitaciones: 'int:label', precio: 'price:label', title: 'text:title' } },
    { make: () => shopWidgets(), fields: { brand: 'text:label+jsonld', in_stock: 'int:label', price: 'price:label+jsonld', title: 'text:title+jsonld' } },
    { make: () => nextProp(), fields: { asking_price: 'int:embedded', beds: 'int:embedded', headline: 'text:embedded', neighborhood: 'text:embedded' } },
    { make: () => homesDirect(), fields: { bathrooms: 'int:label', bedrooms: 'int:label', floor_area: 'int:label', postcode: 'text:label', price: 'price:label', title: 'text:title' } },
    { make: () => slashCars(), fields: { fuel: 'text:label', mileage: 'int:label', price: 'price:label', title: 'text:title', transmission: 'text:label', year: 'int:label' } },
    { make: () => meubleLoc(), fields: { etage: 'text:label', loyer: 'price:label', meuble: 'text:label', pieces: 'int:label', surface: 'int:label', title: 'text:title', ville: 'text:label' } },
    { make: () => priceBlocks(), fields: { bedrooms: 'int:label', city: 'text:label', price: 'price:label', title: 'text:title' } },
    { make: () => jobBoard(), fields: { company: 'text:label', location: 'text:label', salary: 'price:label', title: 'text:title' } },
  ];

  for (const { make, fields } of expected) {
    const site = make();
    it(`${site.host}: the site's own field names, types and sources, and every held-out page's truth exactly`, () => {
      const { role, heldOut } = learned(site);
      expect(fieldsOf(role)).to.deep.equal(fields);
      expect(heldOut.length).to.be.greaterThan(0);
      const counts = { tp: 0, fp: 0, fn: 0 };
      for (const path of heldOut) {
        const applied = applyRole(role, site.pages.get(path)!.html, urlOf(site, path));
        expect(applied.parsed, path).to.deep.equal(truthOf(site, path));
        expect(applied.missing, path).to.deep.equal([]);
        const page = score(applied.parsed, truthOf(site, path));
        counts.tp += page.tp;
        counts.fp += page.fp;
        counts.fn += page.fn;
      }
      expect(f1(counts)).to.equal(1);
    });
  }

  it('as preparation samples: 14 pages in the seeded order, 60% to induce, the rest to verify; every other page exact, on three generator seeds', () => {
    const makers = [(seed: number) => acmeHomes(24, seed), (seed: number) => immoHaus(20, seed), (seed: number) => casaHogar(20, seed), (seed: number) => shopWidgets(20, seed), (seed: number) => nextProp(16, seed), (seed: number) => homesDirect(5, seed), (seed: number) => slashCars(24, seed), (seed: number) => meubleLoc(16, seed), (seed: number) => priceBlocks(20, seed), (seed: number) => jobBoard(6, seed)];
    let pages = 0;
    for (const make of makers) {
      for (const seed of [31, 32, 33]) {
        const site = make(seed);
        const byUrl = new Map(site.details.map((path) => [urlOf(site, path), path]));
        const sampled = sampleOrder([...byUrl.keys()], `${site.host}|detail|1`).slice(0, 14).map((url) => byUrl.get(url)!);
        const cut = Math.ceil(sampled.length * 0.6);
        const role = learnDetail(site, sampled.slice(0, cut), sampled.slice(cut));
        for (const path of site.details.filter((candidate) => !sampled.includes(candidate))) {
          expect(applyRole(role, site.pages.get(path)!.html, urlOf(site, path)).parsed, `${site.host} seed ${seed} ${path}`).to.deep.equal(truthOf(site, path));
          pages++;
        }
      }
    }
    expect(pages).to.be.greaterThan(150);
  });

  it('reads the same fields from another seed of the same generator (the recipe is not tied to the sample)', () => {
    const { role } = learned(acmeHomes(24, 1));
    const other = acmeHomes(12, 77);
    for (const path of other.details) expect(applyRole(role, other.pages.get(path)!.html, urlOf(other, path)).parsed, path).to.deep.equal(truthOf(other, path));
  });

  it('reads immo-haus facts whose class names are hashed anew on every page build', () => {
    const site = immoHaus();
    const { role } = learned(site);
    // No hashed token is stable, so no anchor names one.
    expect(role.stableTokens.some((token) => /__/.test(token))).to.equal(false);
    for (const field of role.fields) for (const source of field.sources) if (source.kind === 'label') expect(source.anchor).to.not.match(/__/);
    expect(role.decimalMark).to.equal(',');
  });
});

describe('Extract induction: decoys and template text', () => {
  it('acme-homes: the price is the listing\'s own, never a "similar listings" card price', () => {
    const site = acmeHomes();
    const { role, heldOut } = learned(site);
    const price = role.fields.find((field) => field.name === 'price')!;
    const label = price.sources.find((source) => source.kind === 'label');
    // The anchor is long enough to leave out the aside's cards, which carry the same label and shape.
    expect(label && 'anchor' in label ? label.anchor : '').to.include('price-line');
    for (const path of heldOut) {
      const similar = [...site.pages.get(path)!.html.matchAll(/<li class="card">.*?<span class="price-value">\$([\d,]+)<\/span>/g)].map((match) => Number(match[1]!.replace(/,/g, '')));
      const read = applyRole(role, site.pages.get(path)!.html, urlOf(site, path)).parsed.price;
      expect(similar).to.have.length(3);
      expect(read, path).to.equal(truthOf(site, path).price);
      // The cards' prices are other listings' (the generator may repeat a price by chance).
      if (!similar.includes(truthOf(site, path).price as number)) expect(similar).to.not.include(read);
    }
  });

  it('price-blocks: the current price, not the struck-through former price or the monthly estimate', () => {
    const site = priceBlocks();
    const { role, heldOut } = learned(site);
    const reduced = heldOut.filter((path) => site.pages.get(path)!.html.includes('price-was'));
    expect(reduced.length).to.be.greaterThan(0);
    for (const path of heldOut) {
      const html = site.pages.get(path)!.html;
      const was = /<s class="price-was">\$([\d,]+)<\/s>/.exec(html)?.[1];
      const monthly = /Est\. \$([\d,]+)\/mo/.exec(html)?.[1];
      const read = applyRole(role, html, urlOf(site, path)).parsed.price;
      expect(read, path).to.equal(truthOf(site, path).price);
      if (was) expect(read).to.not.equal(Number(was.replace(/,/g, '')));
      expect(read).to.not.equal(Number(monthly!.replace(/,/g, '')));
    }
  });

  it('shop-widgets: the product price, not a "recommended" block price under the same label', () => {
    const site = shopWidgets();
    const { role, heldOut } = learned(site);
    for (const path of heldOut) expect(applyRole(role, site.pages.get(path)!.html, urlOf(site, path)).parsed.price, path).to.equal(truthOf(site, path).price);
  });

  it('keeps no template text: the footer, navigation, boilerplate paragraphs and headings of asides are no fields', () => {
    for (const site of [acmeHomes(), casaHogar(), slashCars(), jobBoard(), meubleLoc(), homesDirect()]) {
      const induced = induceRole('kind', samples(site, site.details.slice(0, INDUCE)));
      expect(induced.ok, site.host).to.equal(true);
      if (!induced.ok) continue;
      const names = induced.role.fields.map((field) => field.name);
      // Exactly the truth's names (acme's `url` comes from JSON-LD and is data): nothing of the template.
      expect(names.sort(), site.host).to.deep.equal(Object.keys(truthOf(site, site.details[0]!)).sort());
      const values = induced.role.fields.flatMap((field) => field.sources);
      expect(values.some((source) => source.kind === 'label' && /contact|about|home/i.test(source.label)), site.host).to.equal(false);
    }
  });

  it('slash-cars: the footer\'s "Contact:" label belongs to the site, not the page', () => {
    const site = slashCars();
    const induced = induceRole('car', samples(site, site.details.slice(0, INDUCE)));
    expect(induced.ok && induced.role.fields.map((field) => field.name)).to.not.include('contact');
  });
});

describe('Extract induction: labelled fields with one value in the sample', () => {
  it('meuble-loc: "Meublé" reads "Oui" on every induction page: kept, marked constant; verified pages that say "Non" unmark it', () => {
    const before = meubleLoc(16, 22);
    const induced = induceRole('location', samples(before, before.details.slice(0, INDUCE)));
    expect(induced.ok).to.equal(true);
    if (!induced.ok) return;
    expect(induced.constant).to.deep.equal(['meuble']);
    expect(induced.role.fields.find((field) => field.name === 'meuble')?.constant).to.deep.equal({ pages: INDUCE, extra: 0 });

    // The same site with pages added later, one in three unfurnished.
    const after = meubleLoc(24, 22, 0);
    const heldOut = after.details.slice(12, 24);
    expect(heldOut.map((path) => truthOf(after, path).meuble)).to.include('Non');
    const verified = verifyRole({ ...induced.role, type: 'detail', resampled: { fields: ['meuble'], pages: 0 } }, samples(after, heldOut));
    expect(verified.ok).to.equal(true);
    if (!verified.ok) return;
    expect(verified.role.fields.find((field) => field.name === 'meuble')?.constant).to.equal(undefined);
    expect(verified.detail).to.match(/meuble had one value on every induction page: no more pages to sample; each varies/);
    for (const path of heldOut) expect(applyRole(verified.role, after.pages.get(path)!.html, urlOf(after, path)).parsed.meuble, path).to.equal(truthOf(after, path).meuble);
  });

  it('meuble-loc: a field still constant on the held-out pages stays marked, its pages counted', () => {
    const site = meubleLoc(16, 22);
    const induced = induceRole('location', samples(site, site.details.slice(0, INDUCE)));
    if (!induced.ok) throw new Error(induced.detail);
    const verified = verifyRole({ ...induced.role, type: 'detail', resampled: { fields: ['meuble'], pages: 3 } }, samples(site, site.details.slice(INDUCE, INDUCE + VERIFY)));
    if (!verified.ok) throw new Error(verified.detail);
    expect(verified.role.fields.find((field) => field.name === 'meuble')?.constant).to.deep.equal({ pages: INDUCE + VERIFY, extra: 0 });
    expect(verified.detail).to.match(/3 more pages sampled; kept as labelled though constant: meuble \(one value on 12 pages\)/);
  });
});

describe('Extract verification: what is refused', () => {
  it('refuses fewer than 2 pages to induce from and fewer than 2 held-out pages to verify on', () => {
    const site = fewPages();
    const one = induceRole('x', samples(site, site.details.slice(0, 1)));
    expect(one).to.deep.include({ ok: false, reason: 'too_few_pages' });
    const induced = induceRole('x', samples(site, site.details.slice(0, 2)));
    if (!induced.ok) throw new Error(induced.detail);
    expect(verifyRole(induced.role, samples(site, site.details.slice(2)))).to.deep.include({ ok: false, reason: 'too_few_pages' });
  });

  it('shell-only: empty shells give nothing that varies', () => {
    const site = shellOnly();
    expect(induceRole('x', samples(site, site.details))).to.deep.include({ ok: false, reason: 'nothing_varies' });
  });

  it('same-pages: identical pages are refused, their one labelled field being the only thing they hold', () => {
    const site = samePages();
    const induced = induceRole('x', samples(site, site.details.slice(0, 5)));
    expect(induced).to.deep.include({ ok: false, reason: 'nothing_varies' });
    if (!induced.ok) expect(induced.detail).to.equal('Nothing varies across the 5 sampled pages of this kind.');
  });

  it('odd-facts: labels drawn anew on every page leave nothing but the heading, which does not verify', () => {
    const site = oddFacts();
    const induced = induceRole('x', samples(site, site.details.slice(0, 8)));
    if (!induced.ok) throw new Error(induced.detail);
    expect(induced.role.fields.map((field) => field.name)).to.deep.equal(['title']);
    const verified = verifyRole(induced.role, samples(site, site.details.slice(8)));
    expect(verified).to.deep.include({ ok: false, reason: 'not_verified' });
    expect(verified.detail).to.equal('No field held on 8 held-out pages.');
  });

  it('drops a field the held-out pages do not give, keeps the others, and names the vanished field a defect in the detail', () => {
    const site = acmeHomes();
    const induced = induceRole('x', samples(site, site.details.slice(0, INDUCE)));
    if (!induced.ok) throw new Error(induced.detail);
    // The held-out pages lost their "Year built" row.
    const heldOut = samples(site, site.details.slice(INDUCE, INDUCE + 6)).map((page) => ({ ...page, html: page.html.replace(/<dt>Year built<\/dt><dd>\d+<\/dd>/, '') }));
    const verified = verifyRole(induced.role, heldOut);
    if (!verified.ok) throw new Error(verified.detail);
    expect(verified.role.fields.map((field) => field.name)).to.not.include('year_built');
    expect(verified.role.fields.map((field) => field.name)).to.include.members(['price', 'bedrooms', 'title']);
    expect(verified.detail).to.match(/defect: year_built read on none of the 6 held-out pages/);
  });

  it('keeps only the first source of a field whose two sources disagree on the held-out pages', () => {
    const site = acmeHomes();
    const induced = induceRole('x', samples(site, site.details.slice(0, INDUCE)));
    if (!induced.ok) throw new Error(induced.detail);
    expect(induced.role.fields.find((field) => field.name === 'price')?.sources.map((source) => source.kind)).to.deep.equal(['label', 'jsonld']);
    // The structured data now states another price than the page shows.
    const heldOut = samples(site, site.details.slice(INDUCE, INDUCE + VERIFY)).map((page) => ({ ...page, html: page.html.replace(/"price":(\d+)/, (_, value: string) => `"price":${Number(value) + 1}`) }));
    const verified = verifyRole(induced.role, heldOut);
    if (!verified.ok) throw new Error(verified.detail);
    expect(verified.role.fields.find((field) => field.name === 'price')?.sources.map((source) => source.kind)).to.deep.equal(['label']);
    expect(verified.role.fields.find((field) => field.name === 'bedrooms')?.sources.map((source) => source.kind)).to.deep.equal(['label', 'jsonld']);
  });

  it("refuses one site's recipe on another site's pages", () => {
    const immo = immoHaus();
    const casa = casaHogar();
    const induced = induceRole('x', samples(immo, immo.details.slice(0, INDUCE)));
    if (!induced.ok) throw new Error(induced.detail);
    const verified = verifyRole(induced.role, samples(casa, casa.details.slice(0, VERIFY)));
    expect(verified).to.deep.include({ ok: false, reason: 'not_verified' });
    expect(verified.detail).to.match(/^No field held on 4 held-out pages; read on none: baujahr, /);
  });

  it('learns a recognition threshold every held-out page reaches', () => {
    const site = homesDirect();
    const { role } = learned(site);
    expect(role.minSimilarity).to.be.at.least(0.5).and.at.most(1);
    expect(role.signature.length).to.be.greaterThan(0);
  });
});
