import { expect } from 'chai';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { extractCollections, prepareWorkflowId } from '../../core/extract/store';
import { acmeHomes, casaHogar, fewPages, homesDirect, homesListed, immoHaus, nextProp, noLinks, oddFacts, pdfOnly, samePages, shellOnly, shopWidgets, slowHomes, type GeneratedSite } from '../fixtures/extract-sites/sites';
import { f1, score } from '../fixtures/extract-sites/score';
import { createExtractCommands } from '../../core/extract/commands';
import { serveSites, type SitesServer } from '../fixtures/extract-sites/server';
import { newAccount, openAccounts, startApp, type AccountsHandle, type TestAccount } from '../helpers/app';
import { eventually, extractSitesAddress, testStack } from '../helpers/stack';
import { STATE_ATTRIBUTE, STATUS_ATTRIBUTE } from '../../core/jobs/workflow-names';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

async function call(method: string, path: string, options: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['X-API-Key'] = options.key;
  if (options.body !== undefined || options.raw !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${testStack().urls.api}${path}`, {
    method,
    headers,
    ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  let body: Json = {};
  try {
    body = text ? (JSON.parse(text) as Json) : {};
  } catch {
    body = { text };
  }
  return { status: response.status, headers: response.headers, body };
}

const fetchExtract = (key: string, url: string, query: Record<string, string> = {}) =>
  call('GET', `/v1/?${new URLSearchParams({ apikey: key, url, ...query }).toString()}`);

async function prepared(key: string, domain: string): Promise<Json> {
  let record: Json = {};
  await eventually(async () => {
    record = (await call('GET', `/v1/extract/prepared-domains/${domain}`, { key })).body;
    return record.status !== 'preparing';
  }, 600, 250);
  return record;
}

describe('Extract: domain preparation and extract=auto', function () {
  this.timeout(300_000);
  let handle: AccountsHandle;
  let account: TestAccount;
  let other: TestAccount;
  let server: SitesServer;
  let temporal: TemporalHandle;
  const sites = { acme: acmeHomes(), immo: immoHaus(), casa: casaHogar(), shop: shopWidgets(), next: nextProp(), homes: homesDirect(), listed: homesListed() };
  const url = (site: GeneratedSite, path: string) => `http://${site.host}${path}`;

  before(async () => {
    handle = await openAccounts();
    account = await newAccount(handle.accounts, { credits: 100_000 });
    other = await newAccount(handle.accounts, { credits: 100_000 });
    server = await serveSites(extractSitesAddress(), [...Object.values(sites), shellOnly(), samePages(), noLinks(), fewPages(), pdfOnly(), slowHomes(), oddFacts()], { delayMs: { 'slow-homes.test': 400 } });
    temporal = connectTemporal(handle.config);
  });
  after(async () => {
    await temporal?.close();
    await server?.close();
    await handle?.close();
  });

  it('refuses bad submissions with invalid_argument and a reason, before anything is spent', async () => {
    for (const domain of ['https://acme-homes.test', 'acme-homes.test/path', 'localhost', '', 'www.acme-homes.test', 'acme homes.test']) {
      const answer = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body: { domain } });
      expect([answer.status, answer.body.code, answer.body.reason], domain).to.deep.equal([400, 'invalid_argument', 'invalid_domain']);
    }
    const offDomain = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body: { domain: 'acme-homes.test', example_urls: ['http://immo-haus.test/expose/5000'] } });
    expect([offDomain.status, offDomain.body.reason]).to.deep.equal([400, 'invalid_example_urls']);
    const unknown = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body: { domain: 'acme-homes.test', extra: true } });
    expect([unknown.status, unknown.body.code]).to.deep.equal([400, 'invalid_argument']);
    const malformed = await call('POST', '/v1/extract/prepared-domains', { key: account.key, raw: '{"domain":' });
    expect([malformed.status, malformed.body.code]).to.deep.equal([400, 'invalid_argument']);
    const noKey = await call('GET', '/v1/extract/prepared-domains/allowance');
    expect([noKey.status, noKey.body.code]).to.deep.equal([401, 'unauthenticated']);
    const inQuery = await call('GET', `/v1/extract/prepared-domains/allowance?apikey=${account.key}`);
    expect(inQuery.status).to.equal(200);
    expect(inQuery.body).to.include({ used: 0, limit: 10, remaining: 10 });
    expect(inQuery.body.month).to.match(/^\d{4}-\d{2}$/);
    const never = await call('GET', '/v1/extract/prepared-domains/acme-homes.test', { key: account.key });
    expect([never.status, never.body.code]).to.deep.equal([404, 'not_found']);
  });

  it('answers REQS007 domain_not_prepared before fetching, and charges nothing', async () => {
    const before = server.requests.length;
    const answer = await fetchExtract(account.key, url(sites.acme, sites.acme.details[0]!), { extract: 'auto' });
    expect([answer.status, answer.body.code, answer.body.reason]).to.deep.equal([403, 'REQS007', 'domain_not_prepared']);
    expect(answer.body.detail).to.include('/v1/extract/prepared-domains');
    expect(server.requests.length).to.equal(before);
  });

  it('prepares a domain found through its sitemap, serves it, and extracts held-out pages with its own field names', async () => {
    const submitted = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body: { domain: 'acme-homes.test' } });
    expect(submitted.status).to.equal(202);
    expect(submitted.body).to.include({ domain: 'acme-homes.test', status: 'preparing', state: 'received' });
    const record = await prepared(account.key, 'acme-homes.test');
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    expect(record.roles.find((role: Json) => role.role === 'property_detail')?.status).to.equal('ready');
    // The paginated search results are a kind of their own: a list of records.
    expect(record.roles.find((role: Json) => role.role === 'search_list')?.status, JSON.stringify(record.roles)).to.equal('ready');

    const domains = (await call('GET', `/v1/extract/domains?apikey=${account.key}`)).body.domains as Json[];
    expect(domains).to.deep.include({ domain: 'acme-homes.test', verticals: ['real_estate'], warm: true });
    expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: account.key })).body.used).to.equal(1);

    // Pages the preparation never fetched: the site grows, the recipe holds.
    const grown = acmeHomes(40);
    server.add(grown);
    const fresh = grown.details.slice(24);
    const totals = { tp: 0, fp: 0, fn: 0 };
    for (const path of fresh) {
      const answer = await fetchExtract(account.key, url(grown, path), { extract: 'auto' });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.headers.get('content-type')).to.match(/^application\/json/);
      expect(answer.body.html).to.include('<h1>');
      expect(answer.headers.get('x-request-cost')).to.equal('1');
      const { tp, fp, fn } = score(answer.body.parsed as Json, grown.pages.get(path)!.truth!);
      totals.tp += tp;
      totals.fp += fp;
      totals.fn += fn;
    }
    expect(f1(totals)).to.be.at.least(0.95);

    // Search pages past those the preparation saw: every record, with the site's own field names.
    for (const path of grown.lists!.slice(sites.acme.lists!.length)) {
      const answer = await fetchExtract(account.key, url(grown, path), { extract: 'auto' });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body.parsed, path).to.deep.equal(grown.pages.get(path)!.truth);
    }
  });

  it('shows the preparation step in the Temporal Web UI: search attribute FetchplaneState and the memo', async () => {
    const described = await temporal.client.workflow.getHandle(prepareWorkflowId('acme-homes.test')).describe();
    expect(described.typedSearchAttributes.get(STATE_ATTRIBUTE)).to.equal('ready');
    expect(described.typedSearchAttributes.get(STATUS_ATTRIBUTE)).to.equal('ready');
    expect(await described.memo).to.include({ state: 'ready' });
    const running = await temporal.client.workflow.list({ query: `WorkflowId = '${prepareWorkflowId('acme-homes.test')}' AND FetchplaneState = 'ready'` });
    let found = 0;
    for await (const _ of running) found++;
    expect(found).to.be.at.least(1);
  });

  it('projects extract_fields, maps extract=standard, and refuses what the recipe does not know', async () => {
    const path = sites.acme.details[20]!;
    const truth = sites.acme.pages.get(path)!.truth!;
    const some = await fetchExtract(account.key, url(sites.acme, path), { extract: 'auto', extract_fields: 'price,bedrooms' });
    expect(some.body.parsed).to.deep.equal({ price: truth.price, bedrooms: truth.bedrooms });
    const standard = await fetchExtract(account.key, url(sites.acme, path), { extract: 'standard' });
    expect(standard.body.parsed).to.include({ listing_price: truth.price, bedrooms: truth.bedrooms, area: truth.living_area });
    const unknown = await fetchExtract(account.key, url(sites.acme, path), { extract: 'auto', extract_fields: 'price,swimming_pool' });
    expect([unknown.status, unknown.body.code]).to.deep.equal([400, 'REQS004']);
    expect(unknown.body.detail).to.include('swimming_pool');
    const about = await fetchExtract(account.key, url(sites.acme, '/about'), { extract: 'auto' });
    expect([about.status, about.body.code, about.body.reason]).to.deep.equal([403, 'REQS007', 'page_not_recognised']);
    expect(about.headers.get('x-request-cost')).to.equal(null);
  });

  it('answers a ready domain at once to another account, spending no slot, and lets it read the record', async () => {
    const answer = await call('POST', '/v1/extract/prepared-domains', { key: other.key, body: { domain: 'acme-homes.test' } });
    expect([answer.status, answer.body.status]).to.deep.equal([202, 'ready']);
    expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: other.key })).body.used).to.equal(0);
    expect((await call('GET', '/v1/extract/prepared-domains/acme-homes.test', { key: other.key })).body.status).to.equal('ready');
    const list = (await call('GET', '/v1/extract/prepared-domains', { key: other.key })).body;
    expect(list.allowance.used).to.equal(0);
    expect(list.domains.map((record: Json) => record.domain)).to.deep.equal(['acme-homes.test']);
  });

  it('prepares with example_urls, refuses a second preparation while one runs, and honours Idempotency-Key', async () => {
    const body = { domain: 'immo-haus.test', example_urls: [url(sites.immo, sites.immo.details[0]!)] };
    const headers = { 'Idempotency-Key': 'immo-1' };
    const first = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body, headers });
    expect(first.status).to.equal(202);
    const replay = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body, headers });
    expect([replay.status, replay.body.domain]).to.deep.equal([202, 'immo-haus.test']);
    const conflict = await call('POST', '/v1/extract/prepared-domains', { key: account.key, body: { domain: 'immo-haus.test' }, headers });
    expect([conflict.status, conflict.body.code]).to.deep.equal([409, 'idempotency_conflict']);
    const busy = await call('POST', '/v1/extract/prepared-domains', { key: other.key, body: { domain: 'immo-haus.test' } });
    expect([busy.status, busy.body.code]).to.deep.equal([409, 'in_progress']);
    const record = await prepared(account.key, 'immo-haus.test');
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: account.key })).body.used).to.equal(2);

    const path = sites.immo.details[sites.immo.details.length - 1]!;
    const answer = await fetchExtract(account.key, url(sites.immo, path), { extract: 'auto' });
    expect(answer.body.parsed).to.deep.equal(sites.immo.pages.get(path)!.truth);
  });

  for (const [name, code, slotConsumed] of [
    ['shell-only.test', 'unpreparable', false],
    ['same-pages.test', 'preparation_failed', true],
    ['no-links.test', 'discovery_failed', false],
    ['odd-facts.test', 'preparation_exhausted', false],
  ] as const) {
    it(`ends ${name} as ${code} with slot_consumed ${slotConsumed}`, async () => {
      const owner = await newAccount(handle.accounts, { credits: 1000 });
      expect((await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: name } })).status).to.equal(202);
      const record = await prepared(owner.key, name);
      expect(record.status).to.equal('failed');
      expect(record.failure, JSON.stringify(record)).to.include({ code, slot_consumed: slotConsumed });
      expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: owner.key })).body.used).to.equal(slotConsumed ? 1 : 0);
    });
  }

  for (const [name, code] of [
    ['few-pages.test', 'verification_failed'],
    ['pdf-only.test', 'unsupported'],
  ] as const) {
    it(`ends ${name} as ${code}, keeping the slot`, async () => {
      const owner = await newAccount(handle.accounts, { credits: 1000 });
      const site = name === 'few-pages.test' ? fewPages() : pdfOnly();
      const submitted = await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: name, example_urls: [`http://${name}${site.details[0]}`] } });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      const record = await prepared(owner.key, name);
      expect(record.failure, JSON.stringify(record)).to.include({ code, slot_consumed: true });
      expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: owner.key })).body.used).to.equal(1);
    });
  }

  it('counts slots per UTC month: the allowance resets when the month rolls over', async () => {
    const owner = await newAccount(handle.accounts, { credits: 1000 });
    const principal = await handle.accounts.principalFor(owner.accountId, owner.keyId);
    const { slots } = extractCollections(handle.db.db);
    await slots.insertMany([
      { _id: `${owner.accountId}:2026-01:a.test:1`, account_id: owner.accountId, domain: 'a.test', month: '2026-01', created_at: new Date('2026-01-31T23:59:00Z'), returned: false },
      { _id: `${owner.accountId}:2026-01:b.test:2`, account_id: owner.accountId, domain: 'b.test', month: '2026-01', created_at: new Date('2026-01-15T00:00:00Z'), returned: true },
      { _id: `${owner.accountId}:2026-02:c.test:3`, account_id: owner.accountId, domain: 'c.test', month: '2026-02', created_at: new Date('2026-02-01T00:00:01Z'), returned: false },
    ]);
    const at = (iso: string) => createExtractCommands({ db: handle.db, temporal, taskQueue: handle.config.temporalTaskQueue, now: () => new Date(iso) });
    expect(await at('2026-01-31T23:59:59Z').allowance(principal)).to.deep.equal({ used: 1, limit: 10, remaining: 9, month: '2026-01' });
    expect(await at('2026-02-01T00:00:00Z').allowance(principal)).to.deep.equal({ used: 1, limit: 10, remaining: 9, month: '2026-02' });
    expect(await at('2026-03-01T00:00:00Z').allowance(principal)).to.deep.equal({ used: 0, limit: 10, remaining: 10, month: '2026-03' });
  });

  it('loses nothing when the worker is killed mid-preparation', async () => {
    const owner = await newAccount(handle.accounts, { credits: 1000 });
    const site = slowHomes();
    expect((await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: site.host, example_urls: [url(site, site.details[0]!)] } })).status).to.equal(202);
    await eventually(async () => (await call('GET', `/v1/extract/prepared-domains/${site.host}`, { key: owner.key })).body.state === 'preparing', 200, 50);
    // An operator sees the step, not only the status, while it runs.
    await eventually(async () => {
      const described = await temporal.client.workflow.getHandle(prepareWorkflowId(site.host)).describe();
      return described.typedSearchAttributes.get(STATE_ATTRIBUTE) === 'preparing' && (await described.memo)?.state === 'preparing';
    }, 200, 50);
    await testStack().component('worker').kill();
    await testStack().component('worker').start();
    const record = await prepared(owner.key, site.host);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    const path = site.details[site.details.length - 1]!;
    const answer = await fetchExtract(owner.key, url(site, path), { extract: 'auto' });
    expect(answer.body.parsed).to.include({ price: site.pages.get(path)!.truth!.price });
  });

  it('answers out_of_allowance when the month’s slots are used, and hides other accounts’ records', async () => {
    const owner = await newAccount(handle.accounts, { credits: 1000 });
    const month = new Date().toISOString().slice(0, 7);
    const { slots } = extractCollections(handle.db.db);
    await slots.insertMany(
      Array.from({ length: 10 }, (_, index) => ({ _id: `${owner.accountId}:${month}:full-${index}.test:${index}`, account_id: owner.accountId, domain: `full-${index}.test`, month, created_at: new Date(), returned: false })),
    );
    const refused = await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: 'casa-hogar.test' } });
    expect([refused.status, refused.body.code]).to.deep.equal([429, 'out_of_allowance']);
    expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: owner.key })).body).to.include({ used: 10, remaining: 0 });
    // immo-haus.test was submitted by another account: this one cannot read its record.
    const hidden = await call('GET', '/v1/extract/prepared-domains/immo-haus.test', { key: owner.key });
    expect([hidden.status, hidden.body.code]).to.deep.equal([404, 'not_found']);
  });

  it('ends a cancelled preparation as interrupted, returning its slot', async () => {
    const owner = await newAccount(handle.accounts, { credits: 1000 });
    expect((await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: 'casa-hogar.test' } })).status).to.equal(202);
    await temporal.client.workflow.getHandle(prepareWorkflowId('casa-hogar.test')).cancel();
    const record = await prepared(owner.key, 'casa-hogar.test');
    expect(record.failure).to.include({ code: 'interrupted', slot_consumed: false });
    expect((await call('GET', '/v1/extract/prepared-domains/allowance', { key: owner.key })).body.used).to.equal(0);
  });

  for (const key of ['casa', 'shop', 'next'] as const) {
    it(`extracts ${key} site pages it never saw, after preparing from one example URL`, async () => {
      const site = sites[key];
      const owner = await newAccount(handle.accounts, { credits: 10_000 });
      const submitted = await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: site.host, example_urls: [url(site, site.details[0]!)] } });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      const record = await prepared(owner.key, site.host);
      expect(record.status, JSON.stringify(record)).to.equal('ready');
      const grown = ({ casa: casaHogar, shop: shopWidgets, next: nextProp } as const)[key](site.details.length + 6);
      server.add(grown);
      for (const path of grown.details.slice(site.details.length)) {
        // The client-rendered site was prepared from rendered pages: its pages are asked for the same way.
        const answer = await fetchExtract(owner.key, url(grown, path), { extract: 'auto', ...(key === 'next' ? { mode: 'auto' } : {}) });
        expect(answer.body.parsed, `${path} ${JSON.stringify(answer.body)}`).to.deep.equal(grown.pages.get(path)!.truth);
      }
    });
  }

  it('answers a redesigned page with what it can and a warning, then re-prepares the domain by itself', async () => {
    // The site renames a label: "Bathrooms" is now "Baths", a field no other source gives.
    const redesigned = acmeHomes(40);
    for (const page of redesigned.pages.values()) page.html = page.html.replace(/<dt>Bathrooms<\/dt>/g, '<dt>Baths</dt>');
    server.add(redesigned);
    const path = redesigned.details[30]!;
    const truth = redesigned.pages.get(path)!.truth!;
    const stale = await fetchExtract(account.key, url(redesigned, path), { extract: 'auto' });
    expect(stale.status).to.equal(200);
    expect(stale.headers.get('x-extract-warning')).to.include('bathrooms');
    expect(stale.body.parsed).to.include({ price: truth.price, bedrooms: truth.bedrooms });
    expect(stale.body.parsed).to.not.have.property('bathrooms');
    // The record stays ready while the re-preparation runs; the new recipe reads the new label.
    expect((await call('GET', '/v1/extract/prepared-domains/acme-homes.test', { key: account.key })).body.status).to.equal('ready');
    await eventually(async () => {
      const fresh = await fetchExtract(account.key, url(redesigned, path), { extract: 'auto' });
      return fresh.headers.get('x-extract-warning') === null && fresh.body.parsed?.baths === truth.bathrooms;
    }, 240, 250);
  });
  it('finds kinds by crawling a site without a sitemap, tells listings from area lists under one URL shape by structure, and extracts both', async () => {
    const site = sites.homes;
    const owner = await newAccount(handle.accounts, { credits: 10_000 });
    expect((await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: site.host } })).status).to.equal(202);
    const record = await prepared(owner.key, site.host);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    expect(record.roles.map((role: Json) => [role.role, role.status]).sort()).to.deep.equal([
      ['page_detail', 'ready'],
      ['page_list', 'ready'],
    ]);
    // The discovery crawl went through the home page and the area lists (there is no sitemap to read).
    expect(server.requests.some((request) => request.host === site.host && request.path === '/flats-in-camden')).to.equal(true);

    const seen = new Set(server.requests.filter((request) => request.host === site.host).map((request) => request.path));
    // The site grows: more listings per area and three areas more, whose list pages were never seen.
    const grown = homesDirect(8, 6, site.host, 9);
    server.add(grown);
    const fresh = [...grown.details, ...grown.lists!].filter((path) => !seen.has(path));
    expect(fresh.filter((path) => grown.lists!.includes(path))).to.have.length(3);
    const totals = { tp: 0, fp: 0, fn: 0 };
    for (const path of fresh) {
      const answer = await fetchExtract(owner.key, url(grown, path), { extract: 'auto' });
      expect(answer.status, `${path} ${JSON.stringify(answer.body)}`).to.equal(200);
      const counts = score(answer.body.parsed, grown.pages.get(path)!.truth!);
      totals.tp += counts.tp;
      totals.fp += counts.fp;
      totals.fn += counts.fn;
    }
    expect(f1(totals)).to.be.at.least(0.95);

    const list = grown.lists![grown.lists!.length - 1]!;
    const truth = grown.pages.get(list)!.truth as { items: Array<Record<string, string | number>> };
    const prices = await fetchExtract(owner.key, url(grown, list), { extract: 'auto', extract_fields: 'items.price' });
    expect(prices.body.parsed).to.deep.equal({ items: truth.items.map((item) => ({ price: item.price })) });
    // A field of the listings asked of a list page: answered without it, and said so.
    const other = await fetchExtract(owner.key, url(grown, list), { extract: 'auto', extract_fields: 'postcode,items.url' });
    expect(other.body.parsed).to.deep.equal({ items: truth.items.map((item) => ({ url: item.url })) });
    expect(other.headers.get('x-extract-warning')).to.equal('extract_fields not on this page (a page_list page): postcode');
    const standard = await fetchExtract(owner.key, url(grown, list), { extract: 'standard' });
    expect(standard.body.parsed.items[0]).to.include({ listing_price: truth.items[0]!.price, bedrooms: truth.items[0]!.beds, title: truth.items[0]!.title });
    const home = await fetchExtract(owner.key, url(grown, '/'), { extract: 'auto' });
    expect([home.status, home.body.reason]).to.deep.equal([403, 'page_not_recognised']);
  });

  it('prepares the same kinds from example URLs, one per kind, keeping each kind to its own template', async () => {
    const site = sites.listed;
    const owner = await newAccount(handle.accounts, { credits: 10_000 });
    const examples = [url(site, site.details[0]!), url(site, site.lists![0]!)];
    expect((await call('POST', '/v1/extract/prepared-domains', { key: owner.key, body: { domain: site.host, example_urls: examples } })).status).to.equal(202);
    const record = await prepared(owner.key, site.host);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
    expect(record.roles.map((role: Json) => [role.role, role.status, role.url])).to.deep.equal([
      ['page_detail', 'ready', examples[0]],
      ['page_list', 'ready', examples[1]],
    ]);
    const seen = new Set(server.requests.filter((request) => request.host === site.host).map((request) => request.path));
    const grown = homesListed(8);
    server.add(grown);
    for (const path of [...grown.details, ...grown.lists!].filter((candidate) => !seen.has(candidate)).slice(0, 12)) {
      const answer = await fetchExtract(owner.key, url(grown, path), { extract: 'auto' });
      expect(answer.body.parsed, path).to.deep.equal(grown.pages.get(path)!.truth);
    }
  });

  it('answers 402 AUTH010 to extract on a plan without Extract, before anything is fetched or charged', async () => {
    const app = await startApp(undefined, { env: { EXTRACT_PLANS: 'developer,business' } });
    try {
      const free = await newAccount(app.accounts, { credits: 1000 });
      const paid = await newAccount(app.accounts, { plan: 'developer', credits: 1000 });
      const before = server.requests.length;
      const target = url(sites.acme, sites.acme.details[2]!);
      const ask = (key: string, query: Record<string, string>) => fetch(`${app.url}/v1/?${new URLSearchParams({ apikey: key, url: target, ...query }).toString()}`);
      const refused = await ask(free.key, { extract: 'auto', extract_fields: 'no_such_field' });
      const body = (await refused.json()) as Json;
      expect([refused.status, body.code]).to.deep.equal([402, 'AUTH010']);
      expect(refused.headers.get('content-type')).to.equal('application/problem+json');
      expect(body.detail).to.include('developer, business');
      expect(server.requests.length).to.equal(before);
      expect(refused.headers.get('x-request-cost')).to.equal(null);
      // The fallback clients take works on the same plan; a plan with Extract gets the recipe.
      const fallback = await ask(free.key, { autoparse: 'true' });
      expect(fallback.status).to.equal(200);
      const included = await ask(paid.key, { extract: 'auto' });
      expect(included.status, await included.clone().text()).to.equal(200);
      expect(((await included.json()) as Json).parsed).to.include({ price: sites.acme.pages.get(sites.acme.details[2]!)!.truth!.price });
      // Plan usage says whether the plan includes Extract.
      const usage = async (key: string) => ((await (await fetch(`${app.url}/v1/subscriptions/self/details`, { headers: { 'X-API-Key': key } })).json()) as Json).plan.features;
      expect(await usage(free.key)).to.deep.equal({ extract: false });
      expect(await usage(paid.key)).to.deep.equal({ extract: true });
    } finally {
      await app.close();
    }
  });
});
