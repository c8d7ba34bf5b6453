/**
 * Renders of one account against the machine's browser (engine/browser/slots.ts, core/fetch/render-rules.ts)
 * through the running service:
 *
 * - five renders of a page whose script never yields, from one free account, take its share of the
 *   pages (half of BROWSER_MAX_PAGES) and no more: another account's ordinary render finishes before
 *   any of them ends at the render deadline;
 * - renders that ran to the deadline are counted, not charged: past the plan's `deadline_renders`,
 *   the account's renders are refused with 429 `rate_limited` naming the limit on Fetch, MCP, Batch
 *   tasks and crawl pages alike, its plain fetches go on, and another account renders as before;
 * - the share holds for the machine: with the API's Fetch calls and the worker's Batch tasks rendering
 *   for one account at once, its pages at the site are never more than its share.
 *
 * The API and the worker are restarted with a 12 s render deadline and the free plan's
 * `deadline_renders` at 3, and restarted as they were afterwards.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { CONFIG_VARIABLES } from '../../base/config';
import { allResults, batchRequest, waitForRun } from '../batch/helpers';
import { CrawlClient } from '../crawls/helpers';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { eventually, FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { fetchAccount, fetchClient } from './helpers';

const RENDER_TIMEOUT_MS = 12_000;
const DEFAULT_PLAN_LIMITS = CONFIG_VARIABLES.find((variable) => variable.name === 'PLAN_LIMITS')?.fallback ?? '';
/** Pages per account on the stack's browser: half of the default BROWSER_MAX_PAGES (4). */
const SHARE = 2;

async function restart(env: Record<string, string | undefined>): Promise<void> {
  const stack = testStack();
  for (const name of ['api', 'worker'] as const) {
    const component = stack.component(name);
    await component.stop();
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete component.spec.env[key];
      else component.spec.env[key] = value;
    }
    await stack.startOne(name);
  }
}

/** What the site saw: hits per path, and the most `/hold` and `/spin` documents it was serving at once. */
interface SiteCounts {
  hits: Map<string, number>;
  holding: number;
  mostHeld: number;
  spinning: number;
  mostSpinning: number;
}

describe('renders of one account against the machine’s browser', function () {
  this.timeout(300_000);
  let site: FixtureServer;
  const counts: SiteCounts = { hits: new Map(), holding: 0, mostHeld: 0, spinning: 0, mostSpinning: 0 };
  const at = (path: string, host = `spin.${FIXTURE_DOMAIN}`) => `http://${host}:${site.port}${path}`;
  const hits = (path: string) => counts.hits.get(path) ?? 0;

  before(async () => {
    site = await startFixtureServer(async (req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      counts.hits.set(path, hits(path) + 1);
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (path === '/spin') {
        // The page's own script never gives the thread back: no DOMContentLoaded, no answer to anything.
        // The document never ends either, so its connection is open exactly while a page holds it.
        counts.spinning++;
        counts.mostSpinning = Math.max(counts.mostSpinning, counts.spinning);
        res.on('close', () => counts.spinning--);
        return void res.write('<!doctype html><html><head><title>Spin</title><script>for (;;) {}</script></head><body>never');
      }
      if (path === '/hold') {
        counts.holding++;
        counts.mostHeld = Math.max(counts.mostHeld, counts.holding);
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        counts.holding--;
        return void res.end('<!doctype html><html><body><h1>Held</h1><p>Answered after a while.</p></body></html>');
      }
      if (path === '/scripted') {
        // Scripts only: mode=auto renders it. A render also asks for /scripted-ran, which a plain fetch never does.
        return void res.end('<!doctype html><html><body><script>document.body.insertAdjacentHTML("beforeend", "<h1>Made by script</h1>"); fetch("/scripted-ran");</script></body></html>');
      }
      res.end('<!doctype html><html><body><h1>Ordinary</h1><script>document.body.insertAdjacentHTML("beforeend", "<p id=late>LATE</p>")</script></body></html>');
    });
    await restart({ RENDER_TIMEOUT_MS: String(RENDER_TIMEOUT_MS), PLAN_LIMITS: `${DEFAULT_PLAN_LIMITS},free:deadline_renders=3` });
  });

  after(async () => {
    await restart({ RENDER_TIMEOUT_MS: undefined, PLAN_LIMITS: undefined });
    await site.close();
  });

  it('lets another account’s render finish while a free account’s five renders spin to the deadline', async () => {
    const abuser = fetchClient(testStack().urls.api, await fetchAccount());
    const other = fetchClient(testStack().urls.api, await fetchAccount());
    const before = hits('/spin');
    counts.mostSpinning = 0;
    const spinning = Array.from({ length: 5 }, (_, n) =>
      abuser.fetch({ url: at(`/spin?n=${n}`), js_render: 'true' }).then(async (response) => ({ status: response.status, body: await response.text(), endedAt: Date.now() })),
    );
    // The abuser's renders hold their pages before the other account asks.
    await eventually(async () => hits('/spin') - before >= SHARE, 100, 100);
    const response = await other.fetch({ url: at('/ordinary'), js_render: 'true' });
    const otherEndedAt = Date.now();
    expect(response.status).to.equal(200);
    expect(await response.text()).to.contain('LATE');
    const ended = await Promise.all(spinning);
    expect(
      ended.map(({ status }) => status),
      JSON.stringify(ended.map(({ body }) => body.slice(0, 200))),
    ).to.deep.equal([504, 504, 504, 504, 504]);
    expect(otherEndedAt, 'the other account’s render ended before any of the abuser’s').to.be.below(Math.min(...ended.map(({ endedAt }) => endedAt)));
    expect(counts.mostSpinning, 'the abuser’s pages at the site at once').to.equal(SHARE);
    expect(await abuser.used(), 'renders that ran to the deadline are not charged').to.equal(0);
    // Two of them ran to the deadline on their pages, three waited for one: two counted, below the 3 allowed.
    expect((await abuser.fetch({ url: at('/ordinary'), js_render: 'true' })).status).to.equal(200);
  });

  it('refuses the renders of an account whose renders ran to the deadline as often as its plan allows, on every surface', async () => {
    const account = await fetchAccount();
    const spinner = fetchClient(testStack().urls.api, account);
    const spin = (n: number) => spinner.fetch({ url: at(`/spin?deadline=${n}`), js_render: 'true' }).then((response) => response.status);
    expect(await Promise.all([spin(0), spin(1)])).to.deep.equal([504, 504]);
    // Two of the three allowed: the account still renders.
    expect((await spinner.fetch({ url: at('/ordinary?before'), js_render: 'true' })).status).to.equal(200);
    // Only a render that held a page for most of the deadline counts: on a loaded machine one of these may
    // have waited for its page first, so the account spins until its next render is refused (a few more at most).
    let refused: Awaited<ReturnType<typeof spinner.fetch>>;
    // A render answered 200 on the way is charged as any render.
    let spins = 2;
    let renders = 1;
    do {
      expect(await spin(spins++)).to.equal(504);
      refused = await spinner.fetch({ url: at('/ordinary'), js_render: 'true' });
      if (refused.status !== 429) {
        expect(refused.status).to.equal(200);
        await refused.arrayBuffer();
        renders++;
      }
    } while (refused.status !== 429 && spins < 6);

    // Fetch: a fixed render, and mode=auto once it would render, are 429 naming the limit.
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    const problem = (await refused.json()) as { code: string; limit: string; allowed: number };
    expect([problem.code, problem.limit, problem.allowed]).to.deep.equal(['rate_limited', 'deadline_renders', 3]);
    const auto = await spinner.fetch({ url: at('/scripted'), mode: 'auto' });
    expect([auto.status, ((await auto.json()) as { limit: string }).limit]).to.deep.equal([429, 'deadline_renders']);
    // Plain fetches go on, and another account renders.
    const plain = await spinner.fetch({ url: at('/ordinary') });
    expect(plain.status).to.equal(200);
    const other = fetchClient(testStack().urls.api, await fetchAccount());
    expect((await other.fetch({ url: at('/ordinary'), js_render: 'true' })).status).to.equal(200);

    // MCP: the same refusal as a tool error.
    const client = new Client({ name: 'spinning-renders', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${testStack().urls.api}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    try {
      const result = (await client.callTool({ name: 'fetch_page', arguments: { url: at('/ordinary'), js_render: true } })) as CallToolResult;
      expect(result.isError).to.equal(true);
      expect(result.structuredContent).to.deep.include({ code: 'rate_limited', status: 429, limit: 'deadline_renders' });
    } finally {
      await client.close();
    }

    // Batch: a rendered task fails with the refusal; a plain one succeeds.
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
      status: 'closed',
      tasks: [{ url: at('/ordinary?task=rendered'), zenrows_params: { js_render: true } }, { url: at('/ordinary?task=plain') }],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const jobId = created.body.job_id as string;
    await waitForRun(account.key, jobId);
    const results = await allResults(account.key, `/v1/jobs/${jobId}/results`, 'all');
    const byUrl = new Map(results.map((result) => [result.url as string, result]));
    expect(byUrl.get(at('/ordinary?task=plain'))?.status).to.equal('successful');
    const rendered = byUrl.get(at('/ordinary?task=rendered'));
    expect([rendered?.status, (rendered?.error as { code?: string } | undefined)?.code], JSON.stringify(rendered)).to.deep.equal(['failed', 'rate_limited']);

    // Crawl: a start page that needs rendering is not rendered; the crawl fails without a charge.
    const before = hits('/scripted');
    const renderedBefore = hits('/scripted-ran');
    const crawls = new CrawlClient(account);
    const crawlId = await crawls.started({ url: at('/scripted', `crawl.${FIXTURE_DOMAIN}`), max_pages: 5 });
    const crawl = await crawls.until(crawlId, (body) => body.status !== 'running');
    expect(crawl.status, JSON.stringify(crawl)).to.equal('failed');
    // Fetched plain (again if its slice was retried), never rendered.
    expect(hits('/scripted') - before, 'fetched plain').to.be.at.least(1);
    expect(hits('/scripted-ran') - renderedBefore, 'never rendered').to.equal(0);
    // A render of the page does ask for /scripted-ran: the check above could see one.
    expect((await other.fetch({ url: at('/scripted'), js_render: 'true' })).status).to.equal(200);
    await eventually(async () => hits('/scripted-ran') > renderedBefore, 50, 100);
    // The renders answered 200 before the limit (5 credits each), two plain fetches (Fetch and the Batch task), nothing else.
    const charged = 5 * renders + 2;
    await eventually(async () => (await spinner.used()) === charged, 50, 200).catch(async (error: unknown) => {
      throw new Error(`${String(error)}: used ${await spinner.used()}, expected ${charged} (${renders} renders)`);
    });
  });

  it('holds an account’s share for the machine while the API and the worker both render for it', async () => {
    const account = await fetchAccount({ credits: 1_000_000 });
    const client = fetchClient(testStack().urls.api, account);
    counts.mostHeld = 0;
    const before = hits('/hold');
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
      status: 'closed',
      tasks: [0, 1, 2].map((n) => ({ url: at(`/hold?task=${n}`), zenrows_params: { js_render: true } })),
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    // The worker's renders hold pages; then the API's come.
    await eventually(async () => hits('/hold') > before, 150, 100);
    const fetched = await Promise.all([0, 1, 2].map((n) => client.fetch({ url: at(`/hold?fetch=${n}`), js_render: 'true' }).then((response) => response.status)));
    const run = await waitForRun(account.key, created.body.job_id as string);
    expect(fetched).to.deep.equal([200, 200, 200]);
    expect([run.status, (run.stats as { successful: number }).successful], JSON.stringify(run)).to.deep.equal(['completed', 3]);
    expect(hits('/hold') - before).to.equal(6);
    expect(counts.mostHeld, 'pages of the account at the site at once').to.equal(SHARE);
  });
});
