import { expect } from 'chai';
import { align, type Block } from '../../../engine/changes/myers';
import { seeded } from '../../helpers/random';

/** Length of a longest common subsequence, by the textbook table (small inputs only). */
function lcs(a: Int32Array, b: Int32Array): number {
  let row = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const next = new Int32Array(b.length + 1);
    for (let j = 1; j <= b.length; j++) next[j] = a[i - 1] === b[j - 1] ? (row[j - 1] as number) + 1 : Math.max(row[j] as number, next[j - 1] as number);
    row = next;
  }
  return row[b.length] as number;
}

/** Checks that the blocks describe `a` turned into `b` (lines outside them equal, in order); answers the lines kept. */
function kept(a: Int32Array, b: Int32Array, blocks: Block[]): number {
  let i = 0;
  let j = 0;
  for (const block of [...blocks, { aStart: a.length, aEnd: a.length, bStart: b.length, bEnd: b.length }]) {
    expect(block.aStart - i).to.equal(block.bStart - j);
    for (; i < block.aStart; i++, j++) expect(a[i]).to.equal(b[j]);
    i = block.aEnd;
    j = block.bEnd;
  }
  return a.length - blocks.reduce((sum, block) => sum + block.aEnd - block.aStart, 0);
}

describe('change tracking: line alignment', () => {
  it('finds a shortest edit script on random sequences', () => {
    const next = seeded(11);
    for (let round = 0; round < 1500; round++) {
      const alphabet = 1 + Math.floor(next() * 6);
      const a = Int32Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * alphabet));
      const b = Int32Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * alphabet));
      const { blocks, approximate } = align(a, b);
      expect(approximate).to.equal(false);
      expect(kept(a, b, blocks), `${Array.from(a)} / ${Array.from(b)}`).to.equal(lcs(a, b));
    }
  });

  it('reports nothing for equal sequences and one block for disjoint ones', () => {
    expect(align(Int32Array.from([1, 2, 3]), Int32Array.from([1, 2, 3])).blocks).to.deep.equal([]);
    expect(align(Int32Array.from([1, 2]), Int32Array.from([3, 4, 5])).blocks).to.deep.equal([{ aStart: 0, aEnd: 2, bStart: 0, bEnd: 3 }]);
    expect(align(new Int32Array(0), Int32Array.from([7])).blocks).to.deep.equal([{ aStart: 0, aEnd: 0, bStart: 0, bEnd: 1 }]);
  });

  it('past its work bound still describes every change, marked approximate', () => {
    const next = seeded(5);
    // Lines of a page are mostly distinct: the fallback anchors on lines found once in each version.
    const a = Int32Array.from({ length: 3000 }, () => Math.floor(next() * 1e6));
    const b = Int32Array.from(a);
    for (let k = 0; k < 400; k++) b[Math.floor(next() * b.length)] = 1000 + k;
    const exact = align(a, b);
    const bounded = align(a, b, 2000);
    expect(exact.approximate).to.equal(false);
    expect(bounded.approximate).to.equal(true);
    // Valid either way, and the bounded one keeps most of what the exact one keeps.
    const exactKept = kept(a, b, exact.blocks);
    const boundedKept = kept(a, b, bounded.blocks);
    expect(boundedKept).to.be.at.most(exactKept);
    expect(boundedKept).to.be.greaterThan(exactKept * 0.8);
  });
});
