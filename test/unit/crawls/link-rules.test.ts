import { expect } from 'chai';
import { admitLink, linkRules, opensAt } from '../../../core/crawls/link-rules';

describe('crawl link rules', () => {
  const start = 'http://www.shop.fixture.test:8080/';
  const base = 'http://www.shop.fixture.test:8080/docs/';
  const reason = (href: string, rules = linkRules(start, { include: ['/docs/'], exclude: ['/private/'], includeDocuments: false })) => {
    const admitted = admitLink(href, base, rules);
    return admitted.ok ? admitted.url : admitted.reason;
  };

  it('admits in-scope links within the patterns, normalized, and says why it drops the others', () => {
    expect(reason('a/')).to.equal('http://www.shop.fixture.test:8080/docs/a');
    expect(reason('http://blog.shop.fixture.test:8080/docs/b?utm_source=x')).to.equal('http://blog.shop.fixture.test:8080/docs/b');
    expect(reason('/blog/x')).to.equal('patterns');
    expect(reason('private/p')).to.equal('patterns');
    expect(reason('guide.pdf')).to.equal('document');
    expect(reason('http://elsewhere.example/docs/z')).to.equal('out_of_scope');
    expect(reason('mailto:a@b.c')).to.equal('scheme');
  });

  it('keeps documents and every path when the body asks for nothing else', () => {
    const open = linkRules(start, { include: [], exclude: [] });
    expect(reason('guide.pdf', open)).to.equal('http://www.shop.fixture.test:8080/docs/guide.pdf');
    expect(reason('/blog/x', open)).to.equal('http://www.shop.fixture.test:8080/blog/x');
  });

  it('opens pages above the depth, every page without one', () => {
    expect([0, 1, 2].map((depth) => opensAt(depth, 2))).to.deep.equal([true, true, false]);
    expect(opensAt(50, undefined)).to.equal(true);
  });
});
