/**
 * The MCP server through the SDK's own client, over Streamable HTTP on the running service and over
 * stdio (`api/mcp/stdio.ts` as a child process): the tools are listed, each is called against the
 * fixture sites, a screenshot comes back as image content, a refused target as a tool error, and a
 * call is billed exactly as the same HTTP call.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { startBrowserSite, startPrivateListener, type BrowserSite, type PrivateListener } from '../fixtures/browser/site';
import { eventually, testStack } from '../helpers/stack';
import { fetchAccount, fetchClient, type FetchClient } from '../fetch/helpers';
import type { TestAccount } from '../helpers/app';
import { runPythonClient } from '../helpers/python-mcp';

const TOOLS = ['convert_document', 'crawl_read', 'crawl_start', 'crawl_stop', 'extract', 'extract_domain_status', 'extract_prepare_domain', 'fetch_page', 'monitor_changes', 'monitor_create', 'monitor_delete', 'monitor_list', 'plan_usage'];
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function httpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'fetchplane-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${testStack().urls.api}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return client;
}

const ROOT = path.resolve(__dirname, '../..');

/** How a client starts `api/mcp/stdio.ts` against the test stack, acting with `key`. */
const stdioServer = (key: string) => ({
  command: process.execPath,
  args: ['--import', 'tsx', path.join(ROOT, 'api/mcp/stdio.ts')],
  cwd: ROOT,
  env: { ...(testStack().component('api').spec.env as Record<string, string>), FETCHPLANE_API_KEY: key, PATH: testStack().component('api').spec.env.PATH ?? '/usr/bin:/bin' },
});

async function stdioClient(key: string): Promise<Client> {
  const client = new Client({ name: 'fetchplane-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ ...stdioServer(key), stderr: 'ignore' }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const textOf = (result: CallToolResult): string => {
  const [first] = result.content;
  if (first?.type !== 'text') throw new Error(`expected text content, got ${JSON.stringify(result).slice(0, 300)}`);
  return first.text;
};

/** Waits for the account's usage to reach `expected` credits, and fails if it ends anywhere else. */
async function settled(http: FetchClient, expected: number): Promise<void> {
  let used = -1;
  await eventually(async () => (used = await http.used()) === expected, 50, 100).catch(() => undefined);
  expect(used).to.equal(expected);
}

const problemOf = (result: CallToolResult): { code: string; detail: string } => {
  expect(result.isError, JSON.stringify(result).slice(0, 300)).to.equal(true);
  return JSON.parse(textOf(result)) as { code: string; detail: string };
};

describe('MCP server', function () {
  this.timeout(120_000);
  let site: BrowserSite;
  let privateListener: PrivateListener;

  before(async () => {
    privateListener = await startPrivateListener();
    site = await startBrowserSite(privateListener.origin);
  });
  after(async () => {
    await site.close();
    await privateListener.close();
  });

  it('answers /mcp without a key with 401 pointing at the protected-resource metadata', async () => {
    const api = testStack().urls.api;
    const response = await fetch(`${api}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).to.equal(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? '';
    expect(metadataUrl).to.match(/\/\.well-known\/oauth-protected-resource$/);
    const metadata = (await (await fetch(`${api}${new URL(metadataUrl).pathname}`)).json()) as { resource: string; scopes_supported: string[] };
    expect(metadata.resource).to.match(/\/mcp$/);
    expect(metadata.scopes_supported).to.deep.equal(['api']);
    const wrong = await fetch(`${api}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${'0'.repeat(40)}` }, body: '{}' });
    expect(wrong.status).to.equal(401);
    expect(wrong.headers.get('www-authenticate')).to.contain('error="invalid_token"');
  });

  for (const transport of ['Streamable HTTP', 'stdio'] as const) {
    describe(`over ${transport}`, () => {
      let account: TestAccount;
      let client: Client;

      before(async () => {
        account = await fetchAccount();
        client = transport === 'stdio' ? await stdioClient(account.key) : await httpClient(account.key);
      });
      after(async () => {
        await client.close();
      });

      it('lists the tools, each with an object input schema and a description', async () => {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name).sort()).to.deep.equal(TOOLS);
        for (const tool of tools) {
          expect(tool.inputSchema.type).to.equal('object');
          expect(tool.description?.length ?? 0).to.be.greaterThan(20);
        }
      });

      it('fetches a page as Markdown under mode=auto, billed as the same HTTP call', async () => {
        const http = fetchClient(testStack().urls.api, account);
        const before = await http.used();
        const result = await call(client, 'fetch_page', { url: site.at('/', 'open.fixture.test') });
        expect(result.isError ?? false).to.equal(false);
        expect(textOf(result)).to.contain('# Welcome, anyone');
        const toolCost = (result._meta as { credits: number }).credits;
        // The stdio server is its own process: its charges reach the shared ledger when its pool flushes.
        await settled(http, before + toolCost);
        const afterTool = before + toolCost;
        const response = await http.fetch({ url: site.at('/', 'open.fixture.test'), mode: 'auto', response_type: 'markdown', main_content: 'true' });
        expect(response.status).to.equal(200);
        expect(await response.text()).to.equal(textOf(result));
        expect(Number(response.headers.get('x-request-cost'))).to.equal(toolCost);
        await settled(http, afterTool + toolCost);
      });

      it('answers css_extractor and outputs as JSON, 1 credit each', async () => {
        const http = fetchClient(testStack().urls.api, account);
        const before = await http.used();
        const extracted = JSON.parse(textOf(await call(client, 'fetch_page', { url: site.at('/', 'open.fixture.test'), css_extractor: { title: 'h1' } }))) as { title: string };
        expect(extracted.title).to.equal('Welcome, anyone');
        const outputs = JSON.parse(textOf(await call(client, 'fetch_page', { url: site.at('/', 'open.fixture.test'), outputs: 'headings' }))) as { headings: unknown };
        expect(outputs.headings).to.not.equal(undefined);
        await settled(http, before + 2);
      });

      it('returns a screenshot as image content, billed as a rendered fetch', async () => {
        const http = fetchClient(testStack().urls.api, account);
        const before = await http.used();
        const result = await call(client, 'fetch_page', { url: site.at('/', 'open.fixture.test'), js_render: true, screenshot: true });
        const [image] = result.content;
        expect(image?.type).to.equal('image');
        if (image?.type !== 'image') return;
        expect(image.mimeType).to.equal('image/png');
        expect(Buffer.from(image.data, 'base64').subarray(0, 8).equals(PNG)).to.equal(true);
        await settled(http, before + 5);
      });

      it('answers a refused target and bad input with tool errors carrying the problem code, charging nothing', async () => {
        const http = fetchClient(testStack().urls.api, account);
        const before = await http.used();
        expect(problemOf(await call(client, 'fetch_page', { url: `http://127.0.0.2:${site.port}/` })).code).to.equal('REQS001');
        const bad = problemOf(await call(client, 'fetch_page', { url: site.at('/', 'open.fixture.test'), wait: -1 }));
        expect(bad.code).to.equal('REQS004');
        expect(bad.detail).to.contain('wait');
        expect(await http.used()).to.equal(before);
      });

      it('answers extract on an unprepared domain with REQS007 and how to prepare it', async () => {
        const refused = problemOf(await call(client, 'extract', { url: site.at('/', 'open.fixture.test'), fields: ['title'] }));
        expect(refused.code).to.equal('REQS007');
        expect(refused.detail).to.contain('prepared-domains');
      });

      it('prepares a domain and reads its status; refuses a bad domain and one never submitted', async () => {
        const domain = transport === 'stdio' ? 'mcp-stdio-tools.test' : 'mcp-http-tools.test';
        const submitted = JSON.parse(textOf(await call(client, 'extract_prepare_domain', { domain }))) as { domain: string; status: string };
        expect(submitted).to.include({ domain, status: 'preparing' });
        const read = JSON.parse(textOf(await call(client, 'extract_domain_status', { domain }))) as { domain: string; status: string };
        expect(read.domain).to.equal(domain);
        expect(['preparing', 'ready', 'failed']).to.include(read.status);
        expect(problemOf(await call(client, 'extract_prepare_domain', { domain: 'https://x.test/path' })).code).to.equal('invalid_argument');
        expect(problemOf(await call(client, 'extract_domain_status', { domain: 'never-submitted.test' })).code).to.equal('not_found');
      });

      it('starts, reads and stops a crawl; another account never sees it', async () => {
        const started = JSON.parse(textOf(await call(client, 'crawl_start', { url: site.at('/', 'open.fixture.test'), depth: 1, max_items: 5 }))) as { crawl_id: string };
        expect(started.crawl_id).to.match(/^c_/);
        const read = JSON.parse(textOf(await call(client, 'crawl_read', { crawl_id: started.crawl_id, limit: 10 }))) as { crawl_id: string; results: unknown[] };
        expect(read.crawl_id).to.equal(started.crawl_id);
        expect(read.results).to.be.an('array');
        const stopped = JSON.parse(textOf(await call(client, 'crawl_stop', { crawl_id: started.crawl_id }))) as { status: string };
        expect(['stopped', 'completed']).to.include(stopped.status);

        const stranger = await httpClient((await fetchAccount()).key);
        try {
          expect(problemOf(await call(stranger, 'crawl_read', { crawl_id: started.crawl_id })).code).to.equal('crawl_not_found');
          expect(problemOf(await call(stranger, 'crawl_stop', { crawl_id: started.crawl_id })).code).to.equal('crawl_not_found');
        } finally {
          await stranger.close();
        }
      });

      it('reports plan usage', async () => {
        const usage = JSON.parse(textOf(await call(client, 'plan_usage'))) as { usage: number; plan: { name: string } };
        expect(usage.plan.name).to.be.a('string');
        expect(usage.usage).to.be.greaterThan(0);
      });
    });
  }

  for (const transport of ['http', 'stdio'] as const) {
    it(`works with the Python mcp package as client over ${transport}`, async function () {
      this.timeout(300_000);
      const account = await fetchAccount();
      const report = await runPythonClient({
        transport,
        key: account.key,
        url: `${testStack().urls.api}/mcp`,
        ...stdioServer(account.key),
        page: site.at('/', 'open.fixture.test'),
        refused: `http://127.0.0.2:${site.port}/`,
      });
      expect(report.tools).to.deep.equal(TOOLS);
      expect(report.page.isError).to.equal(false);
      expect(report.page.text).to.contain('# Welcome, anyone');
      expect([report.screenshot.type, report.screenshot.mimeType, report.screenshot.head]).to.deep.equal(['image', 'image/png', PNG.toString('hex')]);
      expect(report.refused.isError).to.equal(true);
      expect((JSON.parse(report.refused.text ?? '{}') as { code: string }).code).to.equal('REQS001');
      await settled(fetchClient(testStack().urls.api, account), 1 + 5);
    });
  }

  it('binds an HTTP session to the key that opened it', async () => {
    const owner = await fetchAccount();
    const client = await httpClient(owner.key);
    const transport = (client as unknown as { _transport?: StreamableHTTPClientTransport })._transport;
    const sessionId = transport?.sessionId ?? '';
    expect(sessionId).to.not.equal('');
    const other = await fetchAccount();
    const hijack = await fetch(`${testStack().urls.api}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'mcp-session-id': sessionId, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(hijack.status).to.equal(404);
    await eventually(async () => (await client.listTools()).tools.length === TOOLS.length, 3);
    await client.close();
  });
});
