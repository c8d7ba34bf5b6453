import { expect } from 'chai';
import { diffFields, MAX_FIELD_DEPTH } from '../../../engine/changes';

describe('change tracking: structured outputs field by field', () => {
  it('names nested fields with dots and items of object arrays by index', () => {
    const previous = { title: 'Lamp', offers: { price: '10.00', currency: 'EUR' }, items: [{ sku: 'a', stock: 3 }, { sku: 'b', stock: 0 }] };
    const current = { title: 'Lamp', offers: { price: '12.00', currency: 'EUR' }, items: [{ sku: 'a', stock: 2 }, { sku: 'b', stock: 0 }] };
    expect(diffFields(previous, current).changes).to.deep.equal({
      'offers.price': { previous: '10.00', current: '12.00' },
      'items.0.stock': { previous: 3, current: 2 },
    });
  });

  it('compares arrays of plain values whole, and reports fields that came or went with null', () => {
    const changes = diffFields({ tags: ['a', 'b'], old: 1 }, { tags: ['a', 'b', 'c'], fresh: true }).changes;
    expect(changes).to.deep.equal({
      tags: { previous: ['a', 'b'], current: ['a', 'b', 'c'] },
      fresh: { previous: null, current: true },
      old: { previous: 1, current: null },
    });
  });

  it('does not count a field that differs only by a volatile run, and says what it ignored', () => {
    const result = diffFields({ updated: 'Updated 2024-05-06T10:00:00Z', price: '$5' }, { updated: 'Updated 2024-05-07T11:30:00Z', price: '$5' });
    expect(result.changes).to.deep.equal({});
    expect(result.ignored.map((run) => run.kind)).to.deep.equal(['timestamp']);
  });

  it('tells types apart and escapes dots in keys', () => {
    expect(diffFields({ n: 1 }, { n: '1' }).changes).to.deep.equal({ n: { previous: 1, current: '1' } });
    expect(Object.keys(diffFields({ 'a.b': 1 }, { 'a.b': 2 }).changes)).to.deep.equal(['a\\.b']);
  });

  it('treats a missing output as an empty one', () => {
    expect(diffFields(undefined, { price: '$5' }).changes).to.deep.equal({ price: { previous: null, current: '$5' } });
    expect(diffFields({}, {}).changes).to.deep.equal({});
  });

  it('compares a subtree nested past the depth bound as one value', () => {
    const deep = (leaf: number): unknown => {
      let value: unknown = { leaf };
      for (let k = 0; k < MAX_FIELD_DEPTH + 10; k++) value = { next: value };
      return value;
    };
    const changes = Object.keys(diffFields(deep(1), deep(2)).changes);
    expect(changes).to.have.length(1);
    expect((changes[0] as string).split('.')).to.have.length(MAX_FIELD_DEPTH);
  });
});
