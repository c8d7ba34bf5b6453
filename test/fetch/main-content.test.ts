import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toMarkdown, toPlainText } from '../../engine/outputs';
import { allResults, batchAccount, batchRequest, waitForRun } from '../batch/helpers';
import { CrawlClient, crawlAccount } from '../crawls/helpers';
import { MAIN_CONTENT_CASES, type MainContentCase } from '../fixtures/main-content';
import { startFixtureServer, type FixtureServer } from '../helpers/fixtures';
import { FIXTURE_DOMAIN, testStack } from '../helpers/stack';
import { expectProblemCode, fetchAccount, fetchClient, type FetchClient } from './helpers';

const fixture = (name: string): MainContentCase => {
  const found = MAIN_CONTENT_CASES.find((page) => page.name === name);
  if (!found) throw new Error(`no fixture page ${name}`);
  return found;
};
const NEWS = fixture('news-article');
const BLOG = fixture('blog-comments');

function expectArticle(text: string, page: MainContentCase): void {
  for (const wanted of page.must.filter((line) => !/^#|[|`[\]]|https?:/.test(line))) expect(text, wanted).to.contain(wanted);
  for (const unwanted of page.mustNot) expect(text, unwanted).to.not.contain(unwanted);
}

describe('main_content through Fetch, crawls, Batch and MCP', () => {
  let site: FixtureServer;
  let client: FetchClient;
  /** The site under a fixture host name, as crawls and MCP reach it. */
  const named = (path: string): string => `http://www.articles.${FIXTURE_DOMAIN}:${site.port}${path}`;

  before(async () => {
    site = await startFixtureServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const body = path === '/news' ? NEWS.html : path === '/blog' ? BLOG.html : path === '/' ? '<html><body><h1>Articles</h1><a href="/news">News</a> <a href="/blog">Blog</a></body></html>' : undefined;
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body ?? 'not found');
    });
  });
  after(() => site.close());
  beforeEach(async () => {
    client = fetchClient(testStack().urls.api, await fetchAccount());
  });

  describe('Fetch', () => {
    it('answers the article as Markdown and plain text at the price of the page, and the page unchanged without the option', async () => {
      const url = `${site.url}news`;
      const article = await client.fetch({ url, response_type: 'markdown', main_content: 'true' });
      expect(article.status).to.equal(200);
      expect(article.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
      expect(article.headers.get('x-request-cost')).to.equal('1');
      const markdown = await article.text();
      expectArticle(markdown, NEWS);
      expect(markdown).to.contain('| Ring road | 22,100 | 35,900 |');
      expect(markdown).to.contain('- Forty-eight new suspension cables');

      const whole = await client.fetch({ url, response_type: 'markdown' });
      expect(await whole.text()).to.equal(toMarkdown(NEWS.html, url));
      const wholeText = await client.fetch({ url, response_type: 'plaintext', main_content: 'false' });
      expect(await wholeText.text()).to.equal(toPlainText(NEWS.html));

      const text = await client.fetch({ url, response_type: 'plaintext', main_content: 'true', main_content_metadata: 'true' });
      expect(text.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      const body = await text.text();
      expect(body.startsWith('---\ntitle: "Harbour bridge reopens after two-year repair"\nbyline: "Maren Holt"\ndate: "2026-03-14T08:30:00Z"\n---\n\n')).to.equal(true);
      expectArticle(body, NEWS);
      expect(await client.used()).to.equal(4);
    });

    it('answers the article as HTML without a response_type, and adds it to the json_response envelope', async () => {
      const url = `${site.url}blog`;
      const html = await client.fetch({ url, main_content: 'true' });
      expect(html.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      const article = await html.text();
      expect(article.startsWith('<article>')).to.equal(true);
      expect(article).to.contain('<pre><code class="language-python">');
      expectArticle(article, BLOG);

      const envelope = (await (await client.fetch({ url, json_response: 'true', main_content: 'true' })).json()) as { html: string; main_content: Record<string, string | null> };
      expect(envelope.html).to.equal(BLOG.html);
      expect(envelope.main_content).to.include({ title: BLOG.metadata.title, byline: 'Tomasz Wierzba', date: '2025-11-02' });
      expect(envelope.main_content.content).to.contain('<article>');
      expectArticle(envelope.main_content.content ?? '', BLOG);
      const plain = (await (await client.fetch({ url, json_response: 'true' })).json()) as Record<string, unknown>;
      expect(plain).to.not.have.property('main_content');
    });

    it('works on rendered pages at the rendered price', async () => {
      const url = `${site.url}news`;
      const rendered = await client.fetch({ url, js_render: 'true', response_type: 'markdown', main_content: 'true' });
      expect(rendered.status).to.equal(200);
      expect(rendered.headers.get('x-request-cost')).to.equal('5');
      expectArticle(await rendered.text(), NEWS);
    });

    const cases: Array<[string, Record<string, string>, string]> = [
      ['a non-boolean main_content', { main_content: 'maybe' }, 'main_content'],
      ['a non-boolean main_content_metadata', { main_content: 'true', main_content_metadata: 'yes' }, 'main_content_metadata'],
      ['main_content_metadata without main_content', { main_content_metadata: 'true' }, 'main_content_metadata'],
      ['main_content with a PDF', { js_render: 'true', response_type: 'pdf', main_content: 'true' }, 'main_content'],
    ];
    for (const [name, params, parameter] of cases) {
      it(`answers ${name} with REQS004 naming ${parameter}, fetching nothing`, async () => {
        const before = site.requests.length;
        const failure = await expectProblemCode(await client.fetch({ url: `${site.url}news`, ...params }));
        expect([failure.status, failure.code, failure.parameter]).to.deep.equal([400, 'REQS004', parameter]);
        expect(site.requests.length).to.equal(before);
      });
    }
  });

  it('is documented in the OpenAPI document as an extension, on Fetch and on crawls', async () => {
    type Operation = { parameters?: Array<{ name: string; schema?: { type?: string; description?: string } }>; requestBody?: { content: Record<string, { schema: { properties: Record<string, { type?: string; description?: string }> } }> } };
    const document = (await (await fetch(`${testStack().urls.api}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const param = (name: string) => document.paths['/v1/']?.get?.parameters?.find((parameter) => parameter.name === name)?.schema;
    expect(param('main_content')?.type).to.equal('boolean');
    expect(param('main_content')?.description).to.contain('Extension of this service');
    expect(param('main_content_metadata')?.type).to.equal('boolean');
    const crawlBody = document.paths['/v1/crawls']?.post?.requestBody?.content['application/json']?.schema.properties;
    expect(crawlBody?.main_content?.type).to.equal('boolean');
    expect(crawlBody?.main_content?.description).to.contain('Extension of this service');
  });

  describe('crawls', () => {
    it('serves each kept page as its article, and refuses main_content without output_format or of the wrong type', async () => {
      const crawls = new CrawlClient(await crawlAccount());
      const crawlId = await crawls.started({ url: named('/'), depth: 1, output_format: 'markdown', main_content: true });
      await crawls.finish(crawlId);
      const { crawl, results } = await crawls.finish(crawlId);
      expect(crawl.main_content).to.equal(true);
      const news = results.find((result) => String(result.url).endsWith('/news'));
      expect(news?.content_status).to.equal('fetched');
      const content = await fetch(`${crawls.api}${news?.content_url as string}`, { headers: { 'X-API-Key': crawls.account.key } });
      expect(content.headers.get('content-type')).to.equal('text/markdown; charset=utf-8');
      expectArticle(await content.text(), NEWS);
      const download = await fetch(`${crawls.api}/v1/crawls/${crawlId}/download`, { headers: { 'X-API-Key': crawls.account.key } });
      const lines = (await download.text()).trim().split('\n').map((line) => JSON.parse(line) as { url: string; content?: string });
      expectArticle(lines.find((line) => line.url.endsWith('/blog'))?.content ?? '', BLOG);

      const without = await crawls.start({ url: named('/'), depth: 1, main_content: true });
      expect([without.status, without.body.code]).to.deep.equal([400, 'invalid_parameter']);
      expect(without.body.detail).to.contain('output_format');
      const wrong = await crawls.start({ url: named('/'), depth: 1, output_format: 'html', main_content: 'yes' });
      expect(wrong.status).to.equal(400);
      expect(wrong.body.detail).to.contain('main_content');
    });
  });

  describe('Batch', () => {
    it('takes main_content in zenrows_params at the price of the page, and refuses a bad value before storing anything', async () => {
      const account = await batchAccount();
      const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
        type: 'regular',
        status: 'closed',
        zenrows_params: { response_type: 'markdown', main_content: true },
        tasks: [{ url: `${site.url}news` }, { url: `${site.url}blog` }],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const run = await waitForRun(account.key, created.body.job_id as string);
      expect(run.stats).to.deep.include({ total: 2, successful: 2 });
      expect(run.stats.spend.credits).to.equal(2);
      const rows = await allResults(account.key, `/v1/jobs/${created.body.job_id as string}/results`);
      const news = rows.find((row) => String(row.url).endsWith('/news'));
      expect(news?.type).to.equal('markdown');
      expectArticle(await (await fetch(news?.result_url as string)).text(), NEWS);

      const bad = await batchRequest(account.key, 'POST', '/v1/jobs', { zenrows_params: { main_content: 'maybe' }, tasks: [{ url: `${site.url}news` }] });
      expect(bad.status).to.equal(400);
      expect(bad.body.detail).to.contain('main_content');
    });
  });

  describe('MCP fetch_page', () => {
    let mcp: Client;
    const call = async (args: Record<string, unknown>): Promise<CallToolResult> => (await mcp.callTool({ name: 'fetch_page', arguments: args })) as CallToolResult;
    const textOf = (result: CallToolResult): string => (result.content[0]?.type === 'text' ? result.content[0].text : '');

    before(async () => {
      const account = await fetchAccount();
      mcp = new Client({ name: 'fetchplane-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${testStack().urls.api}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    });
    after(() => mcp.close());

    it('returns the article by default, the whole page with main_content=false, and refuses a bad value', async () => {
      const url = named('/news');
      const article = await call({ url });
      expect(article.isError ?? false).to.equal(false);
      expectArticle(textOf(article), NEWS);
      const whole = await call({ url, main_content: false });
      expect(textOf(whole)).to.equal(toMarkdown(NEWS.html, url));
      const withMetadata = await call({ url, main_content_metadata: true });
      expect(textOf(withMetadata).startsWith('---\ntitle: "Harbour bridge reopens after two-year repair"\n')).to.equal(true);
      const bad = await call({ url, main_content: 'yes' });
      expect(bad.isError).to.equal(true);
      expect(JSON.parse(textOf(bad))).to.include({ code: 'REQS004', parameter: 'main_content' });
    });
  });
});
