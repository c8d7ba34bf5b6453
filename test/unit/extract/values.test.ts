/**
 * Value parsing as the generated sites write their values: prices in four locales, counts with units,
 * identifiers that look like numbers, dates, links. A type is inferred once from the sampled values,
 * and every later value is normalised by it.
 */
import { expect } from 'chai';
import { applyRole, induceRole } from '../../../engine/extract';
import { decimalMarkOf, inferType, normalize, parseNumber, type DecimalMark } from '../../../engine/extract/values';
import { immoHaus } from '../../fixtures/extract-sites/sites';
import { samples, urlOf } from './pages';

/** The type the values infer and what each normalises to. */
const read = (values: string[], mark: DecimalMark) => {
  const type = inferType(values, mark);
  return { type, values: values.map((value) => normalize(value, type, mark, 'http://site.test/a/b')) };
};


describe('Extract values: prices', () => {
  it('reads prices as the sites write them: en-US, en-GB, de-DE thousands and decimals', () => {
    expect(read(['$1,020,000', '$370,000'], '.')).to.deep.equal({ type: 'price', values: [1_020_000, 370_000] });
    expect(read(['£1,250,000', '£975,000'], '.')).to.deep.equal({ type: 'price', values: [1_250_000, 975_000] });
    expect(read(['1.234.567 €', '980.000 €'], ',')).to.deep.equal({ type: 'price', values: [1_234_567, 980_000] });
    expect(read(['$104.73', '$5.10'], '.')).to.deep.equal({ type: 'price', values: [104.73, 5.1] });
    expect(read(['1.234,50 €', '99,95 €'], ',')).to.deep.equal({ type: 'price', values: [1234.5, 99.95] });
  });

  it('reads thousands separated by spaces, no-break and narrow no-break spaces (fr-FR)', () => {
    expect(parseNumber(`${(1234).toLocaleString('fr-FR')} €`, ',')).to.equal(1234);
    expect(parseNumber('1\u00a0234,50 €', ',')).to.equal(1234.5);
    expect(parseNumber('12 500 €', ',')).to.equal(12_500);
  });

  it('finds the number inside surrounding words, and nothing where there is none', () => {
    expect(parseNumber('Est. $1,197/mo', '.')).to.equal(1197);
    expect(parseNumber('Salary: $115,000', '.')).to.equal(115_000);
    expect(parseNumber('Price on request', '.')).to.equal(undefined);
    expect(normalize('Price on request', 'price', '.', 'http://site.test/')).to.equal(undefined);
    expect(normalize('   ', 'text', '.', 'http://site.test/')).to.equal(undefined);
  });

  it('judges the decimal mark from all of a site\'s numbers', () => {
    expect(decimalMarkOf(['1.234.567 €', '97 m²', '1978'])).to.equal(',');
    expect(decimalMarkOf(['4,5 km', '12'])).to.equal(',');
    expect(decimalMarkOf(['$1,234', '3.5', '$250,000'])).to.equal('.');
    expect(decimalMarkOf(['3', 'Berlin'])).to.equal('.');
  });
});

describe('Extract values: numbers with units and counts', () => {
  it('reads areas and mileages as their number', () => {
    expect(read(['1,450 sq ft', '600 sq ft'], '.')).to.deep.equal({ type: 'int', values: [1450, 600] });
    expect(read(['97 m²', '140 m²'], ',')).to.deep.equal({ type: 'int', values: [97, 140] });
    expect(read(['132,000 mi', '10,000 mi'], '.')).to.deep.equal({ type: 'int', values: [132_000, 10_000] });
  });

  it('reads counts with a unit word (`3 bd`, `1 bed`/`2 beds`) as numbers, not prose', () => {
    expect(read(['3 bd', '1 bd'], '.')).to.deep.equal({ type: 'int', values: [3, 1] });
    expect(read(['2 beds', '1 bed'], '.')).to.deep.equal({ type: 'int', values: [2, 1] });
    // More than two unit words: words, not a count.
    expect(read(['2 beds', '3 rooms', '1 garage'], '.').type).to.equal('text');
  });

  it('keeps integers and decimals apart, and negative numbers', () => {
    expect(read(['4,5', '3,25'], ',')).to.deep.equal({ type: 'decimal', values: [4.5, 3.25] });
    expect(read(['-12', '7'], '.')).to.deep.equal({ type: 'int', values: [-12, 7] });
    // A non-integer value of an int field does not fit: no value rather than a wrong one.
    expect(normalize('2.5', 'int', '.', 'http://site.test/')).to.equal(undefined);
  });
});

describe('Extract values: identifiers, dates and links', () => {
  it('keeps identifiers as text: ISBNs, zero-led codes, postcodes', () => {
    expect(read(['9780778327707', '9780312857059'], '.')).to.deep.equal({ type: 'text', values: ['9780778327707', '9780312857059'] });
    expect(read(['978-0-7783-2770-7', '978-0-312-85705-9'], '.').type).to.equal('text');
    expect(read(['02139', '94110'], '.')).to.deep.equal({ type: 'text', values: ['02139', '94110'] });
    expect(read(['N1 8YJ', 'SW4 2AB'], '.').type).to.equal('text');
  });

  it('keeps dates written with words, dashes or slashes as text', () => {
    expect(read(['June 2010', 'May 2011'], '.')).to.deep.equal({ type: 'text', values: ['June 2010', 'May 2011'] });
    expect(read(['12 June 2010', '3 May 2011'], '.').type).to.equal('text');
    expect(read(['2010-06-12', '2024-03-01'], '.')).to.deep.equal({ type: 'text', values: ['2010-06-12', '2024-03-01'] });
    expect(read(['06/12/2010', '03/01/2024'], '.').type).to.equal('text');
    expect(read(['01.03.2024', '12.06.2010'], ',').type).to.equal('text');
  });

  it('keeps dotted dates (21.06.2010, 1.3.2024) as text instead of reading the day as a number', () => {
    // Day, month and year: never `int` [21, 15] (comma mark) nor `decimal` [21.06, 15.03] (dot mark).
    expect(read(['21.06.2010', '15.03.2024'], ',')).to.deep.equal({ type: 'text', values: ['21.06.2010', '15.03.2024'] });
    expect(read(['21.06.2010', '15.03.2024'], '.')).to.deep.equal({ type: 'text', values: ['21.06.2010', '15.03.2024'] });
    expect(read(['1.3.2024', '7.11.2023'], ',').type).to.equal('text');
  });

  it('immo-haus with a "Verfügbar ab" date row reads the date, not its day', () => {
    const site = immoHaus();
    const dated = (path: string, index: number) => ({ url: urlOf(site, path), html: site.pages.get(path)!.html.replace('</table>', `<tr><th>Verfügbar ab</th><td>${1 + (index % 9)}.${1 + (index % 12)}.2025</td></tr></table>`) });
    const induced = induceRole('expose', site.details.slice(0, 8).map(dated));
    if (!induced.ok) throw new Error(induced.detail);
    expect(induced.role.fields.find((field) => field.name === 'verfugbar_ab')?.type).to.equal('text');
    const page = dated(site.details[10]!, 10);
    expect(applyRole({ ...induced.role, minSimilarity: 0 }, page.html, page.url).parsed.verfugbar_ab).to.equal('2.11.2025');
  });

  it('resolves links against the page, absolute or relative', () => {
    expect(read(['/p/1', '/p/2'], '.')).to.deep.equal({ type: 'url', values: ['http://site.test/p/1', 'http://site.test/p/2'] });
    expect(read(['https://acme-homes.test/property/oak-1000', '//cdn.test/a.jpg'], '.')).to.deep.equal({ type: 'url', values: ['https://acme-homes.test/property/oak-1000', 'http://cdn.test/a.jpg'] });
  });

  it('immo-haus: induced types and values as the German site writes them', () => {
    const site = immoHaus();
    const induced = induceRole('expose', samples(site, site.details.slice(0, 8)));
    if (!induced.ok) throw new Error(induced.detail);
    expect(induced.role.decimalMark).to.equal(',');
    expect(Object.fromEntries(induced.role.fields.map((field) => [field.name, field.type]))).to.deep.equal({ baujahr: 'int', kaufpreis: 'price', ort: 'text', title: 'text', wohnflache: 'int', zimmer: 'int' });
    const path = site.details[15]!;
    const html = site.pages.get(path)!.html;
    const written = /<th>Kaufpreis<\/th><td>([^<]+)<\/td>/.exec(html)![1]!;
    expect(written).to.match(/^\d{1,3}(\.\d{3})+ €$/);
    expect(applyRole({ ...induced.role, minSimilarity: 0 }, html, urlOf(site, path)).parsed.kaufpreis).to.equal(Number(written.replace(/[^\d]/g, '')));
  });
});
