/**
 * Waiting at a host holds nothing others need, and only the host that answered is paused:
 * - Batch tasks waiting out a paused host give back the worker's and their run's slots, so another
 *   account's job at a healthy host runs meanwhile; deleting the waiting jobs ends their waits;
 * - a 429 at the end of a redirect chain pauses the host that gave it, not the first one;
 * - a Fetch waits at most a few seconds for any host's turn, a Crawl-delay included.
 */
import { expect } from 'chai';
import { newAccount } from '../helpers/app';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { testStack } from '../helpers/stack';
import { accountsHandle, batchStore, urls, waitForRun, waitForRunEnd, startTargetSite } from '../batch/helpers';
import { batchRequest, type Json } from '../webhooks/helpers';

const fetchPage = async (key: string, target: string, extra = ''): Promise<{ status: number; body: Json | string }> => {
  const response = await fetch(`${testStack().urls.api}/v1/?apikey=${key}&url=${encodeURIComponent(target)}${extra}`);
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Json };
  } catch {
    return { status: response.status, body: text };
  }
};

describe('politeness: waiting holds no shared slot, and the host that answered is the one paused', function () {
  this.timeout(240_000);

  let paused: FixtureServer;
  let asked = 0;
  before(async () => {
    // Every answer a 429 asking for two minutes: the gate pauses this host for everyone.
    paused = await startFixtureServer((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(404);
        res.end();
        return;
      }
      asked++;
      res.writeHead(429, { 'Retry-After': '120', 'Content-Type': 'text/plain' });
      res.end('slow down');
    });
  });
  after(() => paused.close());

  it('runs another account’s job at a healthy host while nine free jobs wait at a paused one, and their deletion ends the waits', async () => {
    const { accounts } = await accountsHandle();
    const abusers = await Promise.all(Array.from({ length: 3 }, () => newAccount(accounts, { plan: 'free', credits: 1_000_000 })));
    const jobs: Array<{ key: string; jobId: string; runId: string }> = [];
    for (const abuser of abusers) {
      for (let job = 0; job < 3; job++) {
        const created = await batchRequest(abuser.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', tasks: urls(paused, 'wait', 20, job * 20) });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        jobs.push({ key: abuser.key, jobId: created.body.job_id as string, runId: (created.body.latest_run as Json).run_id as string });
      }
    }
    // The host has answered and is paused: from now on the nine jobs' tasks wait at the gate.
    const deadline = Date.now() + 60_000;
    while (asked === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(asked, 'the paused host was never asked').to.be.above(0);

    const healthy = await startTargetSite();
    try {
      const tenant = await newAccount(accounts, { plan: 'business', credits: 1_000_000 });
      const created = await batchRequest(tenant.key, 'POST', '/v1/jobs', { type: 'regular', status: 'closed', tasks: urls(healthy, 'ok', 60) });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      // Before the paused host's two minutes are over, while the nine jobs still wait.
      const run = await waitForRun(tenant.key, created.body.job_id as string, ['completed', 'failed', 'stopped', 'deleted'], 90_000);
      expect(run.status).to.equal('completed');
      expect(run.stats).to.deep.include({ total: 60, successful: 60 });
      const store = await batchStore();
      const waiting = await store.runs.find({ _id: { $in: jobs.map((job) => job.runId) } }).toArray();
      expect(waiting.filter((doc) => !doc.ended_at).length, 'the free jobs are still waiting at the paused host').to.equal(jobs.length);

      // Deleting them ends their tasks' waits: each run ends, and none of its waiting tasks was billed.
      for (const job of jobs) expect((await batchRequest(job.key, 'DELETE', `/v1/jobs/${job.jobId}`)).status).to.equal(204);
      for (const job of jobs) {
        const ended = await waitForRunEnd(job.runId, 60_000);
        expect(ended.status).to.equal('deleted');
      }
      for (const abuser of abusers) expect((await accounts.charging.usage(abuser.accountId)).used).to.equal(0);
    } finally {
      await healthy.close();
    }
  });

  it('pauses the host at the end of a redirect chain that answered 429, not the host that redirected', async () => {
    let limitedAsked = 0;
    const limited = await startFixtureServer((req, res) => {
      limitedAsked++;
      res.writeHead(429, { 'Retry-After': '60', 'Content-Type': 'text/plain' });
      res.end('slow down');
    });
    const redirector = await startFixtureServer((req, res) => {
      if (req.url === '/hop') {
        res.writeHead(302, { Location: `${limited.url}limited` });
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html><body><p>the redirector answers</p></body></html>');
    });
    try {
      const { accounts } = await accountsHandle();
      const account = await newAccount(accounts, { plan: 'business', credits: 10_000 });
      const hop = await fetchPage(account.key, `${redirector.url}hop`);
      expect(hop.status).to.equal(422);
      expect(limitedAsked).to.equal(1);
      // The redirector is not paused: a page of it answers at once.
      const again = await fetchPage(account.key, `${redirector.url}page`);
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      // The host that answered 429 is paused for everyone: a Fetch is refused at once, retryably, and never reaches it.
      const direct = await fetchPage(account.key, `${limited.url}other`);
      expect(direct.status).to.equal(422);
      expect((direct.body as Json).code).to.equal('RESP001');
      expect((direct.body as Json).detail).to.match(/paused/);
      expect(limitedAsked).to.equal(1);
    } finally {
      await Promise.all([limited.close(), redirector.close()]);
    }
  });

  it('answers a Fetch whose host’s Crawl-delay comes later than its wait at once, retryably', async () => {
    let pages = 0;
    const slow = await startFixtureServer((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('User-agent: *\nCrawl-delay: 30\nAllow: /\n');
        return;
      }
      pages++;
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html><body><p>a page</p></body></html>');
    });
    try {
      const { accounts } = await accountsHandle();
      const account = await newAccount(accounts, { plan: 'business', credits: 10_000 });
      const first = await fetchPage(account.key, `${slow.url}one`, '&respect_robots=true');
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      // The next start at this host is 30 s away: more than a caller on the line waits.
      const second = await fetchPage(account.key, `${slow.url}two`, '&respect_robots=true');
      expect(second.status, JSON.stringify(second.body)).to.equal(422);
      expect((second.body as Json).code).to.equal('RESP001');
      expect((second.body as Json).detail).to.match(/busy/);
      expect(pages).to.equal(1);
      expect((await accounts.charging.usage(account.accountId)).used).to.equal(1);
    } finally {
      await slow.close();
    }
  });
});
