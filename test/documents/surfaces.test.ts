/**
 * Documents through every surface of the running service, each with its price checked: Fetch (each
 * format as Markdown with its structure, the bytes as they came without response_type, json_response's
 * `document`, page markers and speaker notes, a file served as application/octet-stream with a
 * Content-Disposition name, a two-column PDF, a long PDF's page price, js_render targets that are a
 * PDF or an attachment), crawls (documents in scope as results, kept as Markdown; skipped on request),
 * Batch tasks, the MCP tools, and POST /v1/documents (raw, multipart, octet-stream with file_name, JSON).
 */
import { once } from 'node:events';
import net from 'node:net';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { allResults, batchAccount, batchRequest, waitForRun } from '../batch/helpers';
import { CrawlClient, crawlAccount, creditsUsed } from '../crawls/helpers';
import { FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from '../fetch/helpers';
import { expectStructure, served, startDocumentSite, TYPES, type DocumentSite } from './site';

/** Whether a socket's writes stall: no 'drain' within 300 ms. */
const drainedOrStalled = (socket: net.Socket): Promise<boolean> =>
  new Promise((resolve) => {
    const onDrain = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      socket.off('drain', onDrain);
      resolve(true);
    }, 300);
    socket.once('drain', onDrain);
  });

/** The price of a PDF of `pages` fetched plainly: 1, plus 1 per started 50 pages past the first 50. */
const pdfPrice = (pages: number, base = 1): number => base + Math.max(0, Math.ceil((pages - 50) / 50));

describe('documents on every surface', () => {
  let site: DocumentSite;
  let client: FetchClient;
  const api = (): string => testStack().urls.api;

  before(async () => {
    site = await startDocumentSite();
  });
  after(() => site?.close());
  beforeEach(async () => {
    client = fetchClient(api(), await fetchAccount());
  });

  describe('Fetch', () => {
    for (const path of ['/files/report.pdf', '/files/report.docx', '/files/deck.pptx', '/files/book.xlsx']) {
      it(`answers ${path.slice(7)} as Markdown with its headings, list items and table rows, for 1 credit`, async () => {
        const answer = await client.fetch({ url: site.url(path), response_type: 'markdown' });
        const markdown = await answer.text();
        expect(answer.status, markdown).to.equal(200);
        expect(answer.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
        expect(answer.headers.get('x-request-cost')).to.equal('1');
        expectStructure(markdown, served(site, path).truth!);
        expect(await client.used()).to.equal(1);
      });
    }

    it('answers a document’s own bytes with its own type without response_type, never as Markdown', async () => {
      const document = served(site, '/files/report.docx');
      const answer = await client.fetch({ url: site.url(document.path) });
      expect(answer.status).to.equal(200);
      expect(answer.headers.get('content-type')).to.equal(TYPES.docx);
      expect(Buffer.from(await answer.arrayBuffer()).equals(document.bytes)).to.equal(true);
      expect(answer.headers.get('x-request-cost')).to.equal('1');
    });

    it('answers plain text, with page markers as form feeds, and without them when asked', async () => {
      const text = await (await client.fetch({ url: site.url('/files/report.pdf'), response_type: 'plaintext' })).text();
      expect(text).to.contain('\f');
      expect(text).to.not.match(/^#/m);
      const markdown = await (await client.fetch({ url: site.url('/files/report.pdf'), response_type: 'markdown' })).text();
      expect(markdown.startsWith('<!-- page 1 -->')).to.equal(true);
      const unmarked = await (await client.fetch({ url: site.url('/files/report.pdf'), response_type: 'markdown', document_page_markers: 'false' })).text();
      expect(unmarked).to.not.contain('<!-- page');
      expect(await client.used()).to.equal(3);
    });

    it('adds speaker notes of slides only when asked', async () => {
      const url = site.url('/files/deck.pptx');
      const without = await (await client.fetch({ url, response_type: 'markdown' })).text();
      const withNotes = await (await client.fetch({ url, response_type: 'markdown', document_speaker_notes: 'true' })).text();
      expect(without).to.not.contain('Notes');
      expect(withNotes).to.contain('Notes');
      expect(withNotes.length).to.be.greaterThan(without.length);
    });

    it('adds the document object to json_response: format, pages, title, author, dates and pages without text', async () => {
      const answer = await client.fetch({ url: site.url('/files/report.pdf'), json_response: 'true', response_type: 'markdown' });
      expect(answer.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      const envelope = (await answer.json()) as { html: string; status: number; document: Record<string, unknown> };
      expect(envelope.status).to.equal(200);
      expect(envelope.html.startsWith('<html><body>')).to.equal(true);
      expect(envelope.document).to.include({ format: 'pdf' });
      expect(envelope.document.pages).to.be.a('number').and.greaterThan(0);
      expect(envelope.document.pages_without_text).to.deep.equal([]);
      expect(envelope.document).to.have.keys('format', 'pages', 'title', 'author', 'created', 'modified', 'pages_without_text', 'content');
      expect(String(envelope.document.content)).to.contain('<!-- page 1 -->');
      const docx = (await (await client.fetch({ url: site.url('/files/report.docx'), json_response: 'true' })).json()) as { document: Record<string, unknown> };
      expect(docx.document).to.include({ format: 'docx' });
      expect(docx.document).to.not.have.property('content');
    });

    it('reads a file served as application/octet-stream by its Content-Disposition name', async () => {
      const document = served(site, '/download?id=7');
      const answer = await client.fetch({ url: site.url(document.path), response_type: 'markdown' });
      expect(answer.status).to.equal(200);
      expectStructure(await answer.text(), document.truth!);
      const raw = await client.fetch({ url: site.url(document.path) });
      expect(raw.headers.get('content-type')).to.equal('application/octet-stream');
    });

    it('reads a two-column PDF one column after the other, each paragraph whole', async () => {
      const markdown = (await (await client.fetch({ url: site.url('/files/columns.pdf'), response_type: 'markdown', document_page_markers: 'false' })).text()).replace(/\s+/g, ' ');
      let last = -1;
      for (const paragraph of site.columns) {
        const at = markdown.indexOf(paragraph);
        expect(at, paragraph).to.be.greaterThan(last);
        last = at;
      }
    });

    it('prices a long PDF by its pages, on the converted shapes only', async () => {
      expect(site.longPages).to.be.greaterThan(100);
      const url = site.url('/files/long.pdf');
      const markdown = await client.fetch({ url, response_type: 'markdown' });
      expect(markdown.status).to.equal(200);
      expect(markdown.headers.get('x-request-cost')).to.equal(String(pdfPrice(site.longPages)));
      const text = await markdown.text();
      expect(text).to.contain(`<!-- page ${site.longPages} -->`);
      expect(text).to.match(/^#+ Section 720 of the long report$/m);
      const raw = await client.fetch({ url });
      expect(raw.headers.get('x-request-cost')).to.equal('1');
      await raw.arrayBuffer();
      expect(await client.used()).to.equal(pdfPrice(site.longPages) + 1);
    });

    it('fetches the bytes of a js_render target that is a PDF or an attachment, at the rendered price', async () => {
      for (const path of ['/files/report.pdf', '/download?id=7']) {
        const answer = await client.fetch({ url: site.url(path), js_render: 'true', response_type: 'markdown' });
        const markdown = await answer.text();
        expect(answer.status, markdown).to.equal(200);
        expect(answer.headers.get('x-request-cost')).to.equal('5');
        expectStructure(markdown, served(site, path).truth!);
      }
      const raw = await client.fetch({ url: site.url('/files/report.pdf'), js_render: 'true' });
      expect(raw.headers.get('content-type')).to.equal(TYPES.pdf);
      expect(Buffer.from(await raw.arrayBuffer()).equals(served(site, '/files/report.pdf').bytes)).to.equal(true);
      expect(await client.used()).to.equal(15);
    });

    it('documents its parameters as our extension in the OpenAPI document, with the price rule', async () => {
      type Operation = { description?: string; parameters?: Array<{ name: string; schema?: { type?: string; description?: string } }>; requestBody?: { content: Record<string, { schema: { properties: Record<string, { description?: string }> } }> } };
      const document = (await (await fetch(`${api()}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
      const param = (name: string) => document.paths['/v1/']?.get?.parameters?.find((parameter) => parameter.name === name)?.schema;
      expect(param('document_page_markers')?.description).to.contain('Extension of this service');
      expect(param('document_speaker_notes')?.type).to.equal('boolean');
      expect(document.paths['/v1/documents']?.post?.description).to.contain('per started 50 PDF pages past the first 50');
      expect(document.paths['/v1/crawls']?.post?.requestBody?.content['application/json']?.schema.properties.include_documents?.description).to.contain('Extension of this service');
    });
  });

  describe('crawls', () => {
    const named = (path: string): string => `http://docs.${FIXTURE_DOMAIN}:${site.server.port}${path}`;

    it('returns the documents linked in scope as results, kept as Markdown and priced as Fetches of them', async () => {
      const crawls = new CrawlClient(await crawlAccount());
      const crawlId = await crawls.started({ url: named('/'), depth: 1, output_format: 'markdown' });
      await crawls.finish(crawlId);
      const { crawl, results } = await crawls.finish(crawlId);
      expect(crawl.include_documents).to.equal(true);
      const byPath = new Map(results.map((result) => [new URL(String(result.url)).pathname + new URL(String(result.url)).search, result]));
      for (const path of ['/files/report.pdf', '/files/report.docx', '/files/deck.pptx', '/files/book.xlsx', '/download?id=7']) {
        const result = byPath.get(path);
        expect(result?.content_status, path).to.equal('fetched');
        const content = await fetch(`${crawls.api}${result?.content_url as string}`, { headers: { 'X-API-Key': crawls.account.key } });
        expect(content.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
        expectStructure(await content.text(), served(site, path).truth!);
      }
      expect(byPath.get('/files/long.pdf')?.content_status).to.equal('fetched');
      // The start page, /about, five documents at 1 credit each, and the long PDF by its pages.
      expect(await creditsUsed(crawls.account.accountId)).to.equal(2 + 5 + pdfPrice(site.longPages));
      const download = await fetch(`${crawls.api}/v1/crawls/${crawlId}/download`, { headers: { 'X-API-Key': crawls.account.key } });
      const lines = (await download.text()).trim().split('\n').map((line) => JSON.parse(line) as { url: string; content?: string });
      expectStructure(lines.find((line) => line.url.endsWith('/files/deck.pptx'))?.content ?? '', served(site, '/files/deck.pptx').truth!);
    });

    it('skips documents on request: links to document files are no results, a document answer is skipped and free', async () => {
      const crawls = new CrawlClient(await crawlAccount());
      const crawlId = await crawls.started({ url: named('/'), depth: 1, output_format: 'markdown', include_documents: false });
      await crawls.finish(crawlId);
      const { crawl, results } = await crawls.finish(crawlId);
      expect(crawl.include_documents).to.equal(false);
      const paths = results.map((result) => new URL(String(result.url)).pathname + new URL(String(result.url)).search);
      expect(paths.sort()).to.deep.equal(['/about', '/download?id=7']);
      const download = results.find((result) => String(result.url).includes('/download'));
      expect(download).to.deep.include({ content_status: 'skipped', skip_reason: 'document' });
      expect(await creditsUsed(crawls.account.accountId)).to.equal(2);
      const wrong = await crawls.start({ url: named('/'), include_documents: 'no' });
      expect([wrong.status, wrong.body.code]).to.deep.equal([400, 'invalid_parameter']);
    });
  });

  describe('Batch', () => {
    it('converts documents in tasks at the Fetch price, the long PDF by its pages, a hostile one failed and free', async () => {
      const account = await batchAccount();
      const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
        type: 'regular',
        status: 'closed',
        zenrows_params: { response_type: 'markdown' },
        tasks: [{ url: site.url('/files/report.docx') }, { url: site.url('/files/long.pdf') }, { url: site.url('/hostile/bomb.docx') }],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const run = await waitForRun(account.key, created.body.job_id as string);
      expect(run.stats).to.deep.include({ total: 3, successful: 2, failed: 1 });
      expect(run.stats.spend.credits).to.equal(1 + pdfPrice(site.longPages));
      const rows = await allResults(account.key, `/v1/jobs/${created.body.job_id as string}/results`);
      const docx = rows.find((row) => String(row.url).endsWith('/report.docx'));
      expect(docx?.type).to.equal('markdown');
      expectStructure(await (await fetch(docx?.result_url as string)).text(), served(site, '/files/report.docx').truth!);
      const bomb = rows.find((row) => String(row.url).endsWith('/bomb.docx'));
      expect(bomb?.error).to.deep.include({ code: 'document_too_large', status: 413 });
    });
  });

  describe('MCP', () => {
    let mcp: Client;
    let account: Awaited<ReturnType<typeof fetchAccount>>;
    const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => (await mcp.callTool({ name, arguments: args })) as CallToolResult;
    const textOf = (result: CallToolResult): string => (result.content[0]?.type === 'text' ? result.content[0].text : '');

    before(async () => {
      account = await fetchAccount();
      mcp = new Client({ name: 'fetchplane-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${api()}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    });
    after(() => mcp?.close());

    it('fetch_page answers a document URL as Markdown, and convert_document a file sent as base64, each priced', async () => {
      const usage = fetchClient(api(), account);
      const page = await call('fetch_page', { url: `http://docs.${FIXTURE_DOMAIN}:${site.server.port}/files/report.docx` });
      expect(page.isError ?? false, textOf(page)).to.equal(false);
      expectStructure(textOf(page), served(site, '/files/report.docx').truth!);
      expect(await usage.used()).to.equal(1);

      const deck = served(site, '/files/deck.pptx');
      const converted = await call('convert_document', { content_base64: deck.bytes.toString('base64'), file_name: 'deck.pptx', document_speaker_notes: true });
      expect(converted.isError ?? false, textOf(converted)).to.equal(false);
      expectStructure(textOf(converted), deck.truth!);
      expect(textOf(converted)).to.contain('Notes');
      expect(converted._meta).to.deep.include({ credits: 1 });
      expect((converted._meta as { document: { format: string } }).document.format).to.equal('pptx');
      const long = served(site, '/files/long.pdf');
      const longAnswer = await call('convert_document', { content_base64: long.bytes.toString('base64') });
      expect(longAnswer._meta).to.deep.include({ credits: pdfPrice(site.longPages) });
      expect(await usage.used()).to.equal(2 + pdfPrice(site.longPages));
    });
  });

  describe('POST /v1/documents', () => {
    const upload = (body: RequestInit['body'], headers: Record<string, string>, query = ''): Promise<Response> =>
      fetch(`${api()}/v1/documents${query}`, { method: 'POST', body, headers: { 'X-API-Key': client.account.key, ...headers } });

    it('converts a raw body by its type, a multipart file part, and an octet-stream named by file_name, 1 credit each', async () => {
      const pdf = served(site, '/files/report.pdf');
      const raw = await upload(pdf.bytes, { 'Content-Type': TYPES.pdf });
      const markdown = await raw.text();
      expect(raw.status, markdown).to.equal(200);
      expect([raw.headers.get('content-type'), raw.headers.get('x-request-cost')]).to.deep.equal(['text/markdown; charset=utf-8', '1']);
      expectStructure(markdown, pdf.truth!);

      const xlsx = served(site, '/files/book.xlsx');
      const form = new FormData();
      form.append('note', 'beside the file');
      form.append('file', new Blob([xlsx.bytes], { type: TYPES.xlsx }), 'book.xlsx');
      const multipart = await upload(form, {}, '?response_type=plaintext');
      expect([multipart.status, multipart.headers.get('content-type')]).to.deep.equal([200, 'text/plain; charset=utf-8']);
      expect(await multipart.text()).to.contain(xlsx.truth!.rows[1]![0]!);

      const docx = served(site, '/files/report.docx');
      const named = await upload(docx.bytes, { 'Content-Type': 'application/octet-stream' }, '?file_name=report.docx&json_response=true&response_type=markdown');
      const envelope = (await named.json()) as { html: string; document: { format: string; content: string } };
      expect(envelope.document.format).to.equal('docx');
      expectStructure(envelope.document.content, docx.truth!);
      expect(await client.used()).to.equal(3);
    });

    it('prices a long PDF by its pages', async () => {
      const answer = await upload(served(site, '/files/long.pdf').bytes, { 'Content-Type': TYPES.pdf });
      expect(answer.status).to.equal(200);
      expect(answer.headers.get('x-request-cost')).to.equal(String(pdfPrice(site.longPages)));
      await answer.text();
      expect(await client.used()).to.equal(pdfPrice(site.longPages));
    });

    it('refuses a body past DOCUMENT_MAX_BYTES while it arrives, naming the cap, and an empty or unknown body, charging nothing', async () => {
      // A body that keeps coming, with no declared length: refused once it passes the cap.
      let sent = 0;
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          sent += 1024 * 1024;
          controller.enqueue(new Uint8Array(1024 * 1024));
          if (sent > 200 * 1024 * 1024) controller.close();
        },
      });
      const over = await fetch(`${api()}/v1/documents`, { method: 'POST', body: endless, headers: { 'X-API-Key': client.account.key, 'Content-Type': TYPES.pdf }, duplex: 'half' } as RequestInit);
      const overProblem = await expectProblemCode(over);
      expect([overProblem.status, overProblem.code, (overProblem as unknown as { limit: string }).limit]).to.deep.equal([413, 'document_too_large', 'DOCUMENT_MAX_BYTES']);
      expect(sent).to.be.lessThan(200 * 1024 * 1024);

      const empty = await expectProblemCode(await upload(new Uint8Array(0), { 'Content-Type': TYPES.pdf }));
      expect([empty.status, empty.code]).to.deep.equal([400, 'invalid_request']);
      const unknown = await expectProblemCode(await upload(Buffer.from('just some words'), { 'Content-Type': 'text/plain' }));
      expect([unknown.status, unknown.code]).to.deep.equal([415, 'document_unsupported']);
      const badParameter = await expectProblemCode(await upload(Buffer.from('x'), { 'Content-Type': TYPES.pdf }, '?response_type=html'));
      expect([badParameter.status, badParameter.code, badParameter.parameter]).to.deep.equal([400, 'REQS004', 'response_type']);
      expect(await client.used()).to.equal(0);
    });

    it('lets a client that keeps sending past DOCUMENT_MAX_BYTES read its 413 when it reads only after its writes stall', async () => {
      // A raw connection that reads nothing until the server stops taking its body: past the cap the
      // server must stop reading rather than close, or the client's next write fails and the answer is lost.
      const { hostname, port } = new URL(api());
      const socket = net.connect(Number(port), hostname);
      await once(socket, 'connect');
      socket.pause();
      let failure: Error | undefined;
      socket.on('error', (error) => (failure = error));
      socket.write(`POST /v1/documents HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${client.account.key}\r\nContent-Type: ${TYPES.pdf}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.concat([Buffer.from(`${(1024 * 1024).toString(16)}\r\n`), Buffer.alloc(1024 * 1024), Buffer.from('\r\n')]);
      let sent = 0;
      let stalled = false;
      while (!stalled && !socket.destroyed && sent < 200) {
        sent += 1;
        if (!socket.write(chunk)) stalled = await drainedOrStalled(socket);
      }
      const received: Buffer[] = [];
      socket.on('data', (data: Buffer) => received.push(data));
      socket.resume();
      await new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)));
      const answer = Buffer.concat(received).toString('latin1');
      expect(answer.split('\r\n')[0], `${failure?.message ?? 'no error'} after ${sent} MB`).to.equal('HTTP/1.1 413 Payload Too Large');
      expect(answer).to.match(/\r\nconnection: close\r\n/i).and.to.include('DOCUMENT_MAX_BYTES');
      expect(sent).to.be.lessThan(200);
      expect(await client.used()).to.equal(0);
    });
  });
});
