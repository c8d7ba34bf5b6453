import { expect } from 'chai';
import { serveSites, type SitesServer } from '../fixtures/extract-sites/server';
import { samePages, watchedHomes, type GeneratedSite } from '../fixtures/extract-sites/sites';
import { eventually, extractSitesAddress } from '../helpers/stack';
import type { TestAccount } from '../helpers/app';
import { allResults, batchAccount, batchRequest, creditsUsed, waitForRun, type Json } from './helpers';

describe('Batch: `extract` in zenrows_params, as on Fetch', function () {
  this.timeout(240_000);
  let server: SitesServer;
  let site: GeneratedSite;
  let account: TestAccount;

  before(async () => {
    site = watchedHomes();
    server = await serveSites(extractSitesAddress(), [site, samePages()]);
    account = await batchAccount();
    // Prepared here unless another suite did already (a domain is prepared once for everyone).
    const path = site.details[0] as string;
    const submitted = await batchRequest(account.key, 'POST', '/v1/extract/prepared-domains', { domain: site.host, example_urls: [`http://${site.host}${path}`] });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
    let record: Json = {};
    await eventually(async () => {
      record = (await batchRequest(account.key, 'GET', `/v1/extract/prepared-domains/${site.host}`)).body;
      return record.status !== 'preparing';
    }, 600, 250);
    expect(record.status, JSON.stringify(record)).to.equal('ready');
  });
  after(async () => {
    await server?.close();
  });

  it('answers each task’s parsed fields; a page of a domain not prepared fails REQS007 uncharged', async () => {
    const paths = site.details.slice(2, 5);
    const unprepared = 'http://same-pages.test/';
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
      tasks: [...paths.map((path) => ({ url: `http://${site.host}${path}` })), { url: unprepared }],
      zenrows_params: { extract: 'auto', extract_fields: 'price,bedrooms' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;
    const run = await waitForRun(account.key, job);
    expect(run.stats).to.deep.include({ total: 4, successful: 3, failed: 1 });
    expect(run.stats.spend.credits).to.equal(3);
    expect(await creditsUsed(account.accountId)).to.equal(3);

    const rows = await allResults(account.key, `/v1/jobs/${job}/results`);
    for (const path of paths) {
      const row = rows.find((one) => one.url === `http://${site.host}${path}`) as Json;
      expect(row, path).to.include({ status: 'successful', type: 'json' });
      const body = (await (await fetch(row.result_url as string)).json()) as Json;
      const truth = site.pages.get(path)?.truth as Json;
      expect(body.parsed, path).to.deep.equal({ price: truth.price, bedrooms: truth.bedrooms });
      expect(body.html).to.include('<h1>');
    }
    const refused = rows.find((one) => one.url === unprepared) as Json;
    expect(refused.status).to.equal('failed');
    expect(refused.error).to.include({ code: 'REQS007', status: 403 });
    expect(refused.error.detail).to.include('same-pages.test');
  });

  it('refuses a bad `extract` at creation, naming it, and creates nothing', async () => {
    const other = await batchAccount();
    for (const params of [{ extract: 'everything' }, { extract: 42 }]) {
      const refused = await batchRequest(other.key, 'POST', '/v1/jobs', { tasks: [{ url: `http://${site.host}${site.details[0] as string}` }], zenrows_params: params });
      expect([refused.status, refused.body.code], JSON.stringify(params)).to.deep.equal([400, 'invalid_argument']);
      expect(JSON.stringify(refused.body), JSON.stringify(params)).to.include('extract');
    }
    expect((await batchRequest(other.key, 'GET', '/v1/jobs')).body.jobs).to.deep.equal([]);
  });
});
