import { expect } from 'chai';
import { CrawlClient, crawlAccount, type Json } from '../crawls/helpers';
import { startChangeSite, type ChangeSite } from '../fixtures/changes/site';
import { FIXTURE_DOMAIN } from '../helpers/stack';
import { historyClient } from './helpers';

describe('crawls with track_changes', function () {
  this.timeout(300_000);
  let site: ChangeSite;

  before(async () => {
    site = await startChangeSite({ pages: 8, seed: 9, host: `www.changes.${FIXTURE_DOMAIN}` });
  });
  after(() => site.close());

  const pageUrl = (id: number): string => site.url(id);
  /**
   * Waits for the crawl to end, then reads its results again from the start: a result is listed as
   * soon as a page links it, its change status once its own page was fetched.
   */
  async function ended(crawls: CrawlClient, crawlId: string, limit?: number): Promise<{ crawl: Json; results: Json[] }> {
    await crawls.finish(crawlId);
    return crawls.finish(crawlId, limit ? { limit } : {});
  }
  const statuses = (results: Json[]): Record<string, string> => Object.fromEntries(results.map((result) => [result.url as string, result.change_status as string]));

  async function download(crawls: CrawlClient, crawlId: string): Promise<Json[]> {
    const response = await fetch(`${crawls.api}/v1/crawls/${crawlId}/download`, { headers: { 'X-API-Key': crawls.account.key } });
    expect(response.status).to.equal(200);
    return (await response.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
  }

  it('says of each result at a second moment whether it is new, changed or the same, and lists the pages gone as removed, in reads and the download', async () => {
    const crawls = new CrawlClient(await crawlAccount());
    const start = `${site.origin}/`;
    const firstId = await crawls.started({ url: start, depth: 1, track_changes: true });
    const first = await ended(crawls, firstId);
    expect(first.crawl).to.include({ status: 'completed', track_changes: true });
    expect(first.crawl).to.not.have.property('stop_reason');
    const ids = site.ids();
    expect(statuses(first.results)).to.deep.equal(Object.fromEntries(ids.map((id) => [pageUrl(id), 'new'])));

    const [edited, gone, kept] = ids as [number, number, number];
    site.edit(edited, 'paragraph added');
    site.remove(gone);
    const added = site.add();
    const secondId = await crawls.started({ url: start, depth: 1, track_changes: true });
    // Small pages of results: the removed URLs are read through a cursor after the crawl's own.
    const second = await ended(crawls, secondId, 3);
    const expected: Record<string, string> = Object.fromEntries(site.ids().map((id) => [pageUrl(id), 'same']));
    expected[pageUrl(edited)] = 'changed';
    expected[pageUrl(added)] = 'new';
    expected[pageUrl(gone)] = 'removed';
    expect(statuses(second.results)).to.deep.equal(expected);
    expect(second.results.at(-1)).to.deep.equal({ url: pageUrl(gone), change_status: 'removed' });
    expect(second.results.find((result) => result.url === pageUrl(kept))?.change_status).to.equal('same');

    const lines = await download(crawls, secondId);
    expect(statuses(lines)).to.deep.equal(expected);
    expect(lines.at(-1)).to.deep.equal({ url: pageUrl(gone), change_status: 'removed' });

    // The pages' histories are the account's: Fetch and /v1/history see what the crawls stored.
    const history = historyClient(crawls.account);
    const versions = (await history.history({ url: pageUrl(edited) })).body.versions as Array<{ status: string }>;
    expect(versions.map((version) => version.status)).to.deep.equal(['changed', 'new']);
    expect((await history.tracked(pageUrl(kept))).change.status).to.equal('same');

    // A crawl that stops at a limit cannot tell gone from not reached: it lists none and leaves the baseline.
    const cappedId = await crawls.started({ url: start, depth: 1, track_changes: true, max_items: 2 });
    const capped = await ended(crawls, cappedId);
    expect(capped.crawl.stop_reason).to.equal('max_items');
    expect(capped.results.map((result) => result.change_status)).to.not.include('removed');

    const thirdId = await crawls.started({ url: start, depth: 1, track_changes: true, output_format: 'html' });
    const third = await ended(crawls, thirdId);
    expect(new Set(third.results.map((result) => result.change_status))).to.deep.equal(new Set(['same']));
    expect(third.results).to.have.length(site.ids().length);
    const contents = await download(crawls, thirdId);
    expect(contents.every((line) => line.content_status === 'fetched' && line.change_status === 'same' && typeof line.content === 'string')).to.equal(true);

    // Another tag is another history: everything is new there.
    const taggedId = await crawls.started({ url: start, depth: 1, track_changes: true, change_tracking_tag: 'weekly' });
    const tagged = await ended(crawls, taggedId);
    expect(new Set(tagged.results.map((result) => result.change_status))).to.deep.equal(new Set(['new']));
    expect(tagged.crawl.change_tracking_tag).to.equal('weekly');
  });

  it('refuses change_tracking_tag without track_changes, and a tag it cannot take', async () => {
    const crawls = new CrawlClient(await crawlAccount());
    const alone = await crawls.start({ url: `${site.origin}/`, change_tracking_tag: 'weekly' });
    expect([alone.status, alone.body.code]).to.deep.equal([422, 'invalid_parameter']);
    expect(alone.body.detail).to.contain('track_changes');
    const bad = await crawls.start({ url: `${site.origin}/`, track_changes: true, change_tracking_tag: 'no spaces' });
    expect(bad.status).to.equal(400);
    expect(bad.body.detail).to.contain('change_tracking_tag');
  });
});
