import { expect } from 'chai';
import { applyRole, induceRole, pageSignals, verifyRole } from '../../../engine/extract';
import { registrableDomain } from '../../../engine/safety/domain';
import { servesVertical } from '../../../engine/extract/recipe-data';

const page = (body: string) => `<!doctype html><html><body><header><nav><a href="/">Home</a></nav></header><main>${body}</main><footer><p>Phone: 555-0100</p></footer></body></html>`;
const labels = (body: string) => Object.fromEntries(pageSignals(page(body), 'http://site.test/x').labels.map((pair) => [pair.label, pair.value]));

describe('one registrable-domain rule', () => {
  it('counts private suffixes: each github.io site is a domain of its own', () => {
    expect(registrableDomain('alice.github.io')).to.equal('alice.github.io');
    expect(registrableDomain('www.alice.github.io')).to.equal('alice.github.io');
    expect(registrableDomain('shop.example.co.uk')).to.equal('example.co.uk');
    expect(registrableDomain('Example.COM.')).to.equal('example.com');
    expect(registrableDomain('10.0.0.1')).to.equal(null);
    expect(registrableDomain('[::1]')).to.equal(null);
  });
});

describe('Extract: what a label owns', () => {
  it('reads the current price, not a struck-through former price or a monthly estimate', () => {
    expect(labels('<div class="price"><span>Price</span><span class="now">$220,000</span><s>$250,000</s><span class="monthly">Est. $1,197/mo</span></div>')).to.include({ Price: '$220,000' });
    expect(labels('<dl><dt>Price</dt><dd><del>$250,000</del> $220,000 <small>Est. $1,197/mo</small></dd></dl>')).to.include({ Price: '$220,000' });
    expect(labels('<dl><dt>Rent</dt><dd><span class="old-price">900 €</span> <span>850 €</span></dd></dl>')).to.include({ Rent: '850 €' });
    // A value that is nothing but a decoy-looking element keeps it: the field keeps a value.
    expect(labels('<dl><dt>Rent</dt><dd><span class="monthly">$1,200/month</span></dd></dl>')).to.include({ Rent: '$1,200/month' });
  });

  it('reads bold labels followed by their value, one per line or per list item', () => {
    expect(labels('<ul><li><strong>ISBN-13</strong>: 9780778327707</li><li><strong>Publisher</strong>: Mira Books</li></ul>')).to.include({ 'ISBN-13': '9780778327707', Publisher: 'Mira Books' });
    expect(labels('<p><b>Publisher:</b> Tor Books<br><b>Date:</b> June 2010<br></p>')).to.include({ Publisher: 'Tor Books', Date: 'June 2010' });
    // Bold words in prose have no colon: no label.
    expect(labels('<p>A <b>great</b> read for everyone.</p>')).to.not.have.property('great');
  });
});

describe('Extract: labelled fields with few values', () => {
  const car = (index: number, transmission: string) =>
    page(`<article><h1>Car ${index}</h1><dl><dt>Price</dt><dd>$${4000 + index * 137}</dd><dt>Transmission</dt><dd>${transmission}</dd></dl><p>Notes.</p></article>`);
  const pages = (from: number, count: number, transmission: (index: number) => string) =>
    Array.from({ length: count }, (_, offset) => ({ url: `http://cars.test/car/${from + offset}`, html: car(from + offset, transmission(from + offset)) }));

  it('keeps a labelled field with one value on every sampled page, marked constant, and reads other values later', () => {
    const induced = induceRole('car', pages(0, 8, () => 'Automatic'));
    expect(induced.ok).to.equal(true);
    if (!induced.ok) return;
    expect(induced.constant).to.deep.equal(['transmission']);
    const field = induced.role.fields.find((candidate) => candidate.name === 'transmission');
    expect(field?.constant).to.deep.equal({ pages: 8, extra: 0 });
    // The footer's "Phone:" is the site's, not the page's: never a field.
    expect(induced.role.fields.map((candidate) => candidate.name)).to.not.include('phone');
    const verified = verifyRole({ ...induced.role, type: 'detail', resampled: { fields: ['transmission'], pages: 0 } }, pages(8, 4, (index) => (index % 2 ? 'Manual' : 'Automatic')));
    expect(verified.ok).to.equal(true);
    if (!verified.ok) return;
    expect(verified.detail).to.match(/transmission had one value on every induction page/);
    expect(verified.role.fields.find((candidate) => candidate.name === 'transmission')?.constant).to.equal(undefined);
    expect(applyRole(verified.role, car(20, 'Manual'), 'http://cars.test/car/20').parsed).to.include({ transmission: 'Manual' });
  });

  it('keeps identifiers as text', () => {
    const books = Array.from({ length: 6 }, (_, index) => ({
      url: `http://books.test/p/${index}`,
      html: page(`<h1>Book ${index}</h1><ul><li><strong>ISBN-10</strong>: 0${312857055 + index * 7}</li><li><strong>Pages</strong>: ${100 + index}</li></ul>`),
    }));
    const induced = induceRole('book', books);
    expect(induced.ok && induced.role.fields.find((field) => field.name === 'isbn_10')?.type).to.equal('text');
  });
});

describe('Extract: the verticals a recipe serves', () => {
  it('judges a recipe stored without its verticals by what its roles map', () => {
    const role = { standard: { listing_price: 'price' } };
    expect(servesVertical({ roles: [role] } as never, 'real_estate')).to.equal(true);
    expect(servesVertical({ roles: [{}] } as never, 'real_estate')).to.equal(false);
    expect(servesVertical({ verticals: ['real_estate'], roles: [] } as never, 'real_estate')).to.equal(true);
  });
});
