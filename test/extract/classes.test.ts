/**
 * Extract (and the crawl it shares) on the ways real sites differ from tidy ones, each a site of its
 * own (test/fixtures/extract-sites/classes.ts), through the API: paths that exist only with their
 * trailing slash, a labelled field constant on every page preparation sees, a price beside a former
 * price and a monthly estimate, search results and category lists; then what one account sees of
 * another's preparation, and extract=standard on a domain that is not real estate.
 */
import { expect } from 'chai';
import { jobBoard, meubleLoc, priceBlocks, slashCars } from '../fixtures/extract-sites/classes';
import type { GeneratedSite } from '../fixtures/extract-sites/sites';
import { f1, score, type Counts } from '../fixtures/extract-sites/score';
import { serveSites, type SitesServer } from '../fixtures/extract-sites/server';
import { newAccount, openAccounts, type AccountsHandle, type TestAccount } from '../helpers/app';
import { eventually, extractSitesAddress, testStack } from '../helpers/stack';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${testStack().urls.api}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as Json) : { text } };
}

const extract = (key: string, url: string, mode = 'auto') => call('GET', `/v1/?${new URLSearchParams({ apikey: key, url, extract: mode }).toString()}`, key);

describe('Extract on unfamiliar sites: one fixture site per way they differ', function () {
  this.timeout(600_000);
  let handle: AccountsHandle;
  let account: TestAccount;
  let other: TestAccount;
  let server: SitesServer;
  const sites = { cars: slashCars(24), rentals: meubleLoc(16), prices: priceBlocks(20), jobs: jobBoard(6) };
  const url = (site: GeneratedSite, path: string) => `http://${site.host}${path}`;

  async function prepare(site: GeneratedSite, example_urls?: string[]): Promise<Json> {
    const submitted = await call('POST', '/v1/extract/prepared-domains', account.key, { domain: site.host, ...(example_urls ? { example_urls } : {}) });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    let record: Json = {};
    await eventually(async () => {
      record = (await call('GET', `/v1/extract/prepared-domains/${site.host}`, account.key)).body;
      return record.status !== 'preparing';
    }, 1200, 250);
    return record;
  }

  /** Field-level counts of extract=auto on `paths` of `site` against their truth. */
  async function scored(site: GeneratedSite, paths: readonly string[]): Promise<Counts> {
    const counts: Counts = { tp: 0, fp: 0, fn: 0 };
    for (const path of paths) {
      const answer = await extract(account.key, url(site, path));
      expect(answer.status, `${path}: ${JSON.stringify(answer.body).slice(0, 300)}`).to.equal(200);
      const counted = score(answer.body.parsed, site.pages.get(path)!.truth!);
      counts.tp += counted.tp;
      counts.fp += counted.fp;
      counts.fn += counted.fn;
    }
    return counts;
  }

  const fetchedPaths = (host: string) => new Set(server.requests.filter((request) => request.host === host).map((request) => request.path));

  before(async () => {
    handle = await openAccounts();
    account = await newAccount(handle.accounts, { credits: 100_000 });
    other = await newAccount(handle.accounts, { credits: 100_000 });
    server = await serveSites(extractSitesAddress(), Object.values(sites));
  });
  after(async () => {
    await server?.close();
    await handle?.close();
  });

  it('crawls a site whose pages exist only with their trailing slash, fetching each as linked', async () => {
    const started = await call('POST', '/v1/crawls', account.key, { url: url(sites.cars, '/'), output_format: 'html', max_items: 1000, max_pages: 1000 });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    let crawl: Json = {};
    await eventually(async () => {
      crawl = (await call('GET', `/v1/crawls/${started.body.crawl_id}?limit=1000`, account.key)).body;
      return crawl.status !== 'running' && crawl.next_cursor === null;
    }, 600, 250);
    const results = crawl.results as Json[];
    // Every car and the about page, each once, each fetched: nothing asked for without its slash.
    expect(results.length, JSON.stringify(crawl).slice(0, 500)).to.equal(sites.cars.details.length + 1);
    expect(results.filter((result) => result.content_status !== 'fetched'), JSON.stringify(results.slice(0, 3))).to.deep.equal([]);
    const asked = [...fetchedPaths(sites.cars.host)];
    expect(asked.filter((path) => path.startsWith('/cars/') && !path.endsWith('/'))).to.deep.equal([]);
  });

  it('prepares the same site by discovery and extracts its held-out cars, a mostly-"Automatic" field included', async () => {
    const record = await prepare(sites.cars);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    const grown = slashCars(36);
    server.add(grown);
    const seen = fetchedPaths(grown.host);
    const heldOut = grown.details.filter((path) => !seen.has(path));
    expect(heldOut.length).to.be.at.least(10);
    const counts = await scored(grown, heldOut);
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.98);
    const manual = heldOut.find((path) => grown.pages.get(path)!.truth!.transmission === 'Manual');
    if (manual) expect((await extract(account.key, url(grown, manual))).body.parsed.transmission).to.equal('Manual');
  });

  it('answers extract=standard on a ready domain that is not real estate with 403 REQS007 vertical_not_supported', async () => {
    const answer = await extract(account.key, url(sites.cars, sites.cars.details[0]!), 'standard');
    expect([answer.status, answer.body.code, answer.body.reason], JSON.stringify(answer.body)).to.deep.equal([403, 'REQS007', 'vertical_not_supported']);
  });

  it('keeps a labelled field that had one value on every page it sampled, says so, and reads its other values later', async () => {
    const record = await prepare(sites.rentals, [url(sites.rentals, sites.rentals.details[2]!)]);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    const role = (record.roles as Json[]).find((candidate) => candidate.status === 'ready')!;
    expect(role.detail, JSON.stringify(record.roles)).to.match(/meuble.*one value on every induction page/);
    // Pages added after preparation: one in three is unfurnished.
    const grown = meubleLoc(30, 22, 16);
    server.add(grown);
    const unfurnished = grown.details.slice(16).filter((path) => grown.pages.get(path)!.truth!.meuble === 'Non');
    expect(unfurnished.length).to.be.at.least(3);
    for (const path of unfurnished) expect((await extract(account.key, url(grown, path))).body.parsed).to.include({ meuble: 'Non' });
    const counts = await scored(grown, grown.details.slice(16));
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.98);
  });

  it('takes the current price from a block with a struck-through former price and a monthly estimate', async () => {
    const record = await prepare(sites.prices);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    const grown = priceBlocks(32);
    server.add(grown);
    const seen = fetchedPaths(grown.host);
    const heldOut = grown.details.filter((path) => !seen.has(path));
    const reduced = heldOut.filter((path) => grown.pages.get(path)!.html.includes('price-was'));
    expect(reduced.length).to.be.at.least(2);
    for (const path of reduced) expect((await extract(account.key, url(grown, path))).body.parsed.price).to.equal(grown.pages.get(path)!.truth!.price);
    const counts = await scored(grown, heldOut);
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.98);
  });

  it('prepares search results and category lists as list kinds and serves their items and next_page', async () => {
    const record = await prepare(sites.jobs);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    const lists = sites.jobs.lists!;
    const counts = await scored(sites.jobs, lists);
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.95);
    const firstSearch = lists.find((path) => path.startsWith('/search/') && sites.jobs.pages.get(path)!.truth!.next_page)!;
    const answer = await extract(account.key, url(sites.jobs, firstSearch));
    expect(answer.body.parsed.next_page).to.equal(sites.jobs.pages.get(firstSearch)!.truth!.next_page);
    expect(answer.body.parsed.items.length).to.be.at.least(2);
    const category = await extract(account.key, url(sites.jobs, '/jobs/design/'));
    expect(category.body.parsed.items).to.have.length(6);
  });

  it('shows another account the shared record without the pages the first account sent', async () => {
    const example = url(sites.rentals, sites.rentals.details[2]!);
    const mine = (await call('GET', `/v1/extract/prepared-domains/${sites.rentals.host}`, account.key)).body;
    expect(JSON.stringify(mine.roles)).to.include(example);
    const theirs = await call('POST', '/v1/extract/prepared-domains', other.key, { domain: sites.rentals.host });
    expect([theirs.status, theirs.body.status]).to.deep.equal([202, 'ready']);
    const read = (await call('GET', `/v1/extract/prepared-domains/${sites.rentals.host}`, other.key)).body;
    expect(read.status).to.equal('ready');
    expect((read.roles as Json[]).length).to.be.at.least(1);
    expect(JSON.stringify(read)).to.not.include(example);
    expect(JSON.stringify(theirs.body)).to.not.include(example);
  });
});
