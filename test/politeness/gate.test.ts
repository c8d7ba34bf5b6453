/**
 * One host gate for the whole installation: crawls of two accounts and a Batch run at one host stay
 * within the host's budget together (counted at the host) and all make progress; a host that answers
 * 429 with Retry-After is left alone by every job, also after the worker restarts.
 */
import { expect } from 'chai';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { adminJson } from '../helpers/admin';
import { operatorHeaders, testStack } from '../helpers/stack';
import { CrawlClient, crawlAccount, sleep } from '../crawls/helpers';
import { batchRequest, waitForRun } from '../batch/helpers';

const PAGES = 40;

/** Most requests that arrived within any `windowMs` window. */
function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while (sorted[to]! - sorted[from]! >= windowMs) from++;
    best = Math.max(best, to - from + 1);
  }
  return best;
}

describe('politeness: one host gate for every job and account', function () {
  let site: FixtureServer;
  const arrivals: Array<{ host: string; path: string; at: number }> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const answered429 = new Set<string>();

  before(async () => {
    site = await startFixtureServer(async (req, res) => {
      const host = (req.headers.host ?? '').split('.')[0]!;
      const path = req.url ?? '/';
      arrivals.push({ host, path, at: Date.now() });
      if (path === '/robots.txt') {
        res.writeHead(404);
        res.end();
        return;
      }
      if (path === '/limited' && !answered429.has(host)) {
        answered429.add(host);
        res.writeHead(429, { 'retry-after': '20', 'content-type': 'text/plain' });
        res.end('slow down');
        return;
      }
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await sleep(40);
      inFlight--;
      const lane = /^\/(\w+)\/$/.exec(path)?.[1];
      const links = lane ? Array.from({ length: PAGES }, (_, index) => `<a href="/${lane}/${index}">${index}</a>`).join('') : '';
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><p>${path}</p>${links}</body></html>`);
    });
  });
  after(() => site.close());

  const origin = (name: string) => `http://${name}.fixture.test:${site.port}`;

  it('keeps two accounts’ crawls and a Batch run at one host within its budget, all making progress', async () => {
    const first = new CrawlClient(await crawlAccount());
    const second = new CrawlClient(await crawlAccount());
    const batch = await crawlAccount();
    const began = Date.now();
    const [crawlA, crawlB] = await Promise.all([first.started({ url: `${origin('paced')}/a/` }), second.started({ url: `${origin('paced')}/b/` })]);
    const tasks = Array.from({ length: PAGES }, (_, index) => ({ url: `${origin('paced')}/t/${index}` }));
    const created = await batchRequest(batch.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', tasks });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const [a, b, run] = await Promise.all([first.finish(crawlA), second.finish(crawlB), waitForRun(batch.key, created.body.job_id as string, undefined, 180_000)]);
    expect(a.crawl.coverage.pages_fetched).to.equal(PAGES + 1);
    expect(b.crawl.coverage.pages_fetched).to.equal(PAGES + 1);
    expect(run.stats).to.deep.include({ total: PAGES, successful: PAGES });

    const paced = arrivals.filter((arrival) => arrival.host === 'paced' && arrival.at >= began);
    expect(paced.length).to.be.at.least(3 * PAGES + 2);
    // 10 request starts a second: at most 52 in any 5 s (one slot of slack at the window's edge).
    expect(busiestWindow(paced.map((arrival) => arrival.at), 5_000)).to.be.at.most(52);
    expect(mostInFlight, 'requests at once at the host').to.be.at.most(4);
    // Every job had its share early on, not one after the other.
    const early = paced.slice(0, Math.floor(paced.length / 2)).map((arrival) => arrival.path.split('/')[1]);
    for (const lane of ['a', 'b', 't']) expect(early.filter((name) => name === lane).length, `requests of ${lane} in the first half`).to.be.at.least(8);
  });

  it('leaves a host that answered 429 with Retry-After alone for every job, also after a worker restart', async () => {
    const account = await crawlAccount();
    const api = testStack().urls.api;
    await fetch(`${api}/v1/?apikey=${account.key}&url=${encodeURIComponent(`${origin('throttle')}/limited`)}`);
    const limitedAt = arrivals.find((arrival) => arrival.host === 'throttle' && arrival.path === '/limited')?.at;
    expect(limitedAt).to.be.a('number');

    const hosts = await adminJson('hosts');
    expect(hosts.hosts_in_backoff).to.be.at.least(1);
    expect(hosts[`throttle.fixture.test:${site.port}`]).to.match(/^back-off until .* 1 in a row, last 429\)$/);
    const metrics = await (await fetch(`${api}/metrics`, { headers: operatorHeaders() })).text();
    expect(metrics).to.match(new RegExp(`fetchplane_host_backoff_seconds\\{host="throttle\\.fixture\\.test:${site.port}"\\} \\d+`));

    await testStack().component('worker').kill();
    await sleep(1_000);
    await testStack().startOne('worker');

    const client = new CrawlClient(account);
    const crawlId = await client.started({ url: `${origin('throttle')}/c/`, max_pages: 3, max_items: 2 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', tasks: [{ url: `${origin('throttle')}/t/1` }] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    // A Fetch is answered at once while the host is paused (its caller waits on the line), reaching nothing.
    const during = await fetch(`${api}/v1/?apikey=${account.key}&url=${encodeURIComponent(`${origin('throttle')}/fetch`)}`);
    expect(during.status).to.equal(422);
    expect(((await during.json()) as { code: string }).code).to.equal('RESP001');
    const { crawl } = await client.finish(crawlId);
    expect(crawl.status).to.equal('completed');
    const run = await waitForRun(account.key, created.body.job_id as string);
    expect(run.stats).to.deep.include({ successful: 1 });
    const other = await fetch(`${api}/v1/?apikey=${account.key}&url=${encodeURIComponent(`${origin('throttle')}/fetch`)}`);
    expect(other.status).to.equal(200);
    expect(arrivals.filter((arrival) => arrival.host === 'throttle' && arrival.path === '/fetch')).to.have.length(1);

    const later = arrivals.filter((arrival) => arrival.host === 'throttle' && arrival.path !== '/limited');
    expect(later.map((arrival) => arrival.path)).to.include.members(['/c/', '/t/1', '/fetch']);
    for (const arrival of later) expect(arrival.at - limitedAt!, `${arrival.path} waited out the pause`).to.be.at.least(19_500);
    // After the pause and good answers, the host is no longer listed.
    const after = await adminJson('hosts');
    expect(after).to.not.have.property(`throttle.fixture.test:${site.port}`);
  });
});
