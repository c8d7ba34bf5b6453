/**
 * Extract through the API on sites whose pages of one kind come in variants
 * (test/fixtures/extract-sites/variants.ts): each site prepared by discovery, then grown, and every page
 * the preparation never fetched (the sites server's request log says which) asked with extract=auto:
 * each must be recognised (200, not page_not_recognised) and give its truth, every list kind must be
 * ready, and the record's detail must say what verification saw of the variants.
 */
import { expect } from 'chai';
import type { GeneratedSite } from '../fixtures/extract-sites/sites';
import { autoLot, recipeBox, staffHub } from '../fixtures/extract-sites/variants';
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

const extract = (key: string, url: string) => call('GET', `/v1/?${new URLSearchParams({ apikey: key, url, extract: 'auto' }).toString()}`, key);

describe('Extract on kinds whose pages come in variants, through the API', function () {
  this.timeout(600_000);
  let handle: AccountsHandle;
  let account: TestAccount;
  let server: SitesServer;
  const sites = { recipes: recipeBox(30), cars: autoLot(36), jobs: staffHub(5) };
  const url = (site: GeneratedSite, path: string) => `http://${site.host}${path}`;

  async function prepare(site: GeneratedSite): Promise<Json> {
    const submitted = await call('POST', '/v1/extract/prepared-domains', account.key, { domain: site.host });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    let record: Json = {};
    await eventually(async () => {
      record = (await call('GET', `/v1/extract/prepared-domains/${site.host}`, account.key)).body;
      return record.status !== 'preparing';
    }, 1200, 250);
    return record;
  }

  /** Prepares `site`, serves `grown` in its place, and scores every page of it the preparation never fetched. */
  async function heldOutScore(site: GeneratedSite, grown: GeneratedSite): Promise<{ record: Json; counts: Counts; heldOut: string[]; refused: string[]; answers: Map<string, Json> }> {
    const record = await prepare(site);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    const seen = new Set(server.requests.filter((request) => request.host === site.host).map((request) => request.path));
    server.add(grown);
    const heldOut = [...grown.details, ...(grown.lists ?? [])].filter((path) => !seen.has(path));
    const counts: Counts = { tp: 0, fp: 0, fn: 0 };
    const refused: string[] = [];
    const answers = new Map<string, Json>();
    for (const path of heldOut) {
      const answer = await extract(account.key, url(grown, path));
      if (answer.status !== 200) refused.push(`${path}: ${answer.status} ${answer.body.reason ?? ''}`);
      else answers.set(path, answer.body.parsed as Json);
      const counted = score(answer.status === 200 ? answer.body.parsed : {}, grown.pages.get(path)!.truth!);
      counts.tp += counted.tp;
      counts.fp += counted.fp;
      counts.fn += counted.fn;
    }
    return { record, counts, heldOut, refused, answers };
  }

  before(async () => {
    handle = await openAccounts();
    account = await newAccount(handle.accounts, { credits: 100_000 });
    server = await serveSites(extractSitesAddress(), Object.values(sites));
  });
  after(async () => {
    await server?.close();
    await handle?.close();
  });

  it('recipes with microdata, JSON-LD or plain markup are one ready kind; the grid of cards and a list kind of three pages are ready lists', async () => {
    const grown = recipeBox(45, 41, 5);
    const { record, counts, heldOut, refused } = await heldOutScore(sites.recipes, grown);
    expect((record.roles as Json[]).map((role) => [role.role, role.status]).sort(), JSON.stringify(record.roles)).to.deep.equal([
      ['category_list', 'ready'],
      ['collections_list', 'ready'],
      ['recipe_detail', 'ready'],
    ]);
    expect((record.roles as Json[]).find((role) => role.role === 'recipe_detail')!.detail).to.match(/variants among them/);
    expect(heldOut.filter((path) => path.startsWith('/collections/'))).to.have.length(2);
    expect(refused).to.deep.equal([]);
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.98);
  });

  it('reads the current car price in every form of the price block, and keeps rail pages, paged search and table rows to their kinds', async () => {
    const grown = autoLot(50, 42, 7);
    const { record, counts, refused, answers } = await heldOutScore(sites.cars, grown);
    expect((record.roles as Json[]).map((role) => [role.role, role.status]).sort(), JSON.stringify(record.roles)).to.deep.equal([
      ['cars_detail', 'ready'],
      ['search_list', 'ready'],
      ['used_list', 'ready'],
    ]);
    expect(refused).to.deep.equal([]);
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.98);
    const badge = [...answers].find(([path]) => path.startsWith('/cars/') && grown.pages.get(path)!.html.includes('badge-deal'));
    const sale = [...answers].find(([path]) => path.startsWith('/cars/') && grown.pages.get(path)!.html.includes('<del'));
    for (const found of [badge, sale]) {
      expect(found, 'a held-out page of this form').to.not.equal(undefined);
      expect(found![1].price).to.equal(grown.pages.get(found![0])!.truth!.price);
    }
    const table = [...answers].find(([path]) => path.startsWith('/used/'));
    expect(Object.keys((table![1].items as Json[])[0]!).sort()).to.deep.equal(['color', 'mileage', 'price', 'url', 'vehicle']);
  });

  it('reads job pages of both layouts with one kind, and team pages that are nothing but cards as a list', async () => {
    const grown = staffHub(8);
    const { record, counts, refused, answers } = await heldOutScore(sites.jobs, grown);
    expect((record.roles as Json[]).map((role) => [role.role, role.status]).sort(), JSON.stringify(record.roles)).to.deep.equal([
      ['jobs_detail', 'ready'],
      ['search_list', 'ready'],
      ['teams_list', 'ready'],
    ]);
    expect(refused).to.deep.equal([]);
    expect(f1(counts), JSON.stringify(counts)).to.be.at.least(0.98);
    const layouts = new Set([...answers.keys()].filter((path) => path.startsWith('/jobs/')).map((path) => (grown.pages.get(path)!.html.includes('job-v2') ? 'terms' : 'table')));
    expect([...layouts].sort()).to.deep.equal(['table', 'terms']);
    const search = [...answers].find(([path]) => path.startsWith('/search') && grown.pages.get(path)!.truth!.next_page);
    if (search) expect(search[1].next_page).to.equal(grown.pages.get(search[0])!.truth!.next_page);
  });
});
