/**
 * Hostile documents on every surface: each kind (a zip bomb, an external entity, nesting past the
 * cap, encrypted files, a PDF whose page tree loops, a truncated PDF, a legacy Office file) answers
 * its stable 4xx code through Fetch and uploads, and the bomb through Batch, crawls and both MCP
 * tools; nothing is charged, and /healthz answers while a DOCX inflating to 200 MB is refused. Every
 * document worker busy answers 503 documents_busy with Retry-After, never 500.
 */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CrawlClient, crawlAccount, creditsUsed } from '../crawls/helpers';
import { newAccount, startApp, type TestApp } from '../helpers/app';
import { eventually, FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from '../fetch/helpers';
import { HOSTILE, served, startDocumentSite, TYPES, type DocumentSite } from './site';

/** Polls /healthz until stopped: every answer's status, and how many came while `busy` was set. */
function pollHealth(api: string): { busy: (on: boolean) => void; stop: () => Promise<{ statuses: number[]; whileBusy: number }> } {
  const statuses: number[] = [];
  let whileBusy = 0;
  let busy = false;
  let running = true;
  const loop = (async () => {
    while (running) {
      const status = await fetch(`${api}/healthz`).then(
        (response) => response.status,
        () => 0,
      );
      statuses.push(status);
      if (busy) whileBusy++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    busy: (on) => (busy = on),
    async stop() {
      running = false;
      await loop;
      return { statuses, whileBusy };
    },
  };
}

describe('hostile documents', () => {
  let site: DocumentSite;
  let client: FetchClient;
  const api = (): string => testStack().urls.api;
  const upload = (bytes: Buffer, type: string, key = client.account.key): Promise<Response> =>
    fetch(`${api()}/v1/documents`, { method: 'POST', body: bytes, headers: { 'X-API-Key': key, 'Content-Type': type } });

  before(async () => {
    site = await startDocumentSite();
  });
  after(() => site?.close());
  beforeEach(async () => {
    client = fetchClient(api(), await fetchAccount());
  });

  for (const kind of HOSTILE) {
    it(`answers ${kind.path.slice(9)} with ${kind.status} ${kind.code} through Fetch and uploads, charging nothing`, async () => {
      const fetched = await expectProblemCode(await client.fetch({ url: site.url(kind.path), response_type: 'markdown' }));
      expect([fetched.status, fetched.code]).to.deep.equal([kind.status, kind.code]);
      const document = served(site, kind.path);
      const uploaded = await expectProblemCode(await upload(document.bytes, document.type));
      expect([uploaded.status, uploaded.code]).to.deep.equal([kind.status, kind.code]);
      expect(await client.used()).to.equal(0);
    });
  }

  it('keeps /healthz answering while a DOCX inflating to 200 MB is refused through Fetch and an upload at once', async () => {
    const health = pollHealth(api());
    await eventually(async () => (await fetch(`${api()}/healthz`)).ok);
    health.busy(true);
    const bomb = served(site, '/hostile/bomb.docx');
    const [fetched, uploaded] = await Promise.all([client.fetch({ url: site.url(bomb.path), response_type: 'markdown' }), upload(bomb.bytes, TYPES.docx)]);
    health.busy(false);
    const { statuses, whileBusy } = await health.stop();
    expect((await expectProblemCode(fetched)).code).to.equal('document_too_large');
    expect((await expectProblemCode(uploaded)).code).to.equal('document_too_large');
    expect(whileBusy).to.be.greaterThan(0);
    expect(statuses.every((status) => status === 200), JSON.stringify(statuses)).to.equal(true);
    expect(await client.used()).to.equal(0);
  });

  it('fails the bomb as a crawl result without billing it, and keeps the crawl going', async () => {
    const crawls = new CrawlClient(await crawlAccount());
    const crawlId = await crawls.started({ url: `http://docs.${FIXTURE_DOMAIN}:${site.server.port}/hostile/`, depth: 1, output_format: 'markdown' });
    // Read again once it ended: a first read can pass results before their pages were fetched.
    await crawls.finish(crawlId);
    const { crawl, results } = await crawls.finish(crawlId);
    expect(crawl.status).to.equal('completed');
    expect(results.find((result) => String(result.url).endsWith('/bomb.docx'))?.content_status).to.equal('failed');
    expect(results.find((result) => String(result.url).endsWith('/about'))?.content_status).to.equal('fetched');
    expect(await creditsUsed(crawls.account.accountId)).to.equal(2);
  });

  it('answers the bomb as a tool error with its code through fetch_page and convert_document, charging nothing', async () => {
    const account = await fetchAccount();
    const mcp = new Client({ name: 'fetchplane-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${api()}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    try {
      const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
        const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError).to.equal(true);
        return JSON.parse(result.content[0]?.type === 'text' ? result.content[0].text : '{}') as Record<string, unknown>;
      };
      const bomb = served(site, '/hostile/bomb.docx');
      expect(await call('fetch_page', { url: `http://docs.${FIXTURE_DOMAIN}:${site.server.port}${bomb.path}` })).to.include({ code: 'document_too_large', status: 413 });
      expect(await call('convert_document', { content_base64: bomb.bytes.toString('base64'), file_name: 'bomb.docx' })).to.include({ code: 'document_too_large', limit: 'DOCUMENT_MAX_INFLATED_BYTES' });
      expect(await call('convert_document', { content_base64: served(site, '/hostile/encrypted.pdf').bytes.toString('base64') })).to.include({ code: 'document_encrypted', status: 422 });
      expect(await fetchClient(api(), account).used()).to.equal(0);
    } finally {
      await mcp.close();
    }
  });

  describe('with every document worker busy', () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(undefined, { env: { DOCUMENT_WORKERS: '1', DOCUMENT_QUEUE: '0' } });
    });
    after(() => app?.close());

    it('answers 503 documents_busy with Retry-After, never 500, and charges nothing', async () => {
      const account = await newAccount(app.accounts);
      const bomb = fetch(`${app.url}/v1/documents`, { method: 'POST', body: served(site, '/hostile/bomb.docx').bytes, headers: { 'X-API-Key': account.key, 'Content-Type': TYPES.docx } });
      await eventually(async () => app.deps.services.documents.stats().busy === 1, 200, 25);
      const busy = await fetch(`${app.url}/v1/documents`, { method: 'POST', body: served(site, '/files/report.pdf').bytes, headers: { 'X-API-Key': account.key, 'Content-Type': TYPES.pdf } });
      expect(busy.headers.get('retry-after')).to.equal('5');
      expect(await expectProblemCode(busy)).to.include({ status: 503, code: 'documents_busy' });
      const viaFetch = await fetch(`${app.url}/v1/?${new URLSearchParams({ apikey: account.key, url: site.url('/files/report.docx'), response_type: 'markdown' }).toString()}`);
      expect(viaFetch.headers.get('retry-after')).to.equal('5');
      expect(await expectProblemCode(viaFetch)).to.include({ status: 503, code: 'documents_busy' });
      expect((await expectProblemCode(await bomb)).code).to.equal('document_too_large');
      expect((await app.accounts.charging.usage(account.accountId)).used).to.equal(0);
    });
  });
});
