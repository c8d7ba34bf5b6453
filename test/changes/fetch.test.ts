import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { autoparse, cssExtract, findMainContent, renderMainContent, toMarkdown, toPlainText } from '../../engine/outputs';
import { allResults, batchAccount, batchRequest, waitForRun } from '../batch/helpers';
import { startChangeSite, type ChangeSite } from '../fixtures/changes/site';
import { expectProblemCode, fetchAccount } from '../fetch/helpers';
import { testStack } from '../helpers/stack';
import { changeBlobChunks, historyClient, storedVersions, type HistoryClient } from './helpers';

const PRODUCT = JSON.stringify({ title: 'h1', price: '.price', stock: '.stock' });

describe('change tracking on Fetch: track_changes, as_of, /v1/history', function () {
  this.timeout(120_000);
  let site: ChangeSite;
  let client: HistoryClient;

  before(async () => {
    site = await startChangeSite({ pages: 12 });
  });
  after(() => site.close());
  beforeEach(async () => {
    client = historyClient(await fetchAccount());
  });

  /** A page of the site that is a product (it has a price and a stock line). */
  const product = (): number => {
    const found = site.ids().find((id) => site.model(id).price !== undefined);
    if (found === undefined) throw new Error('the site has no product page');
    return found;
  };
  /** The site's `k`th page. */
  const page = (k: number): number => site.ids()[k] as number;

  it('finds a re-fetch of every page the same though every answer carries new noise, and stores nothing for it', async () => {
    for (const path of site.paths()) {
      const url = `${site.origin}${path}`;
      const first = await client.fetch({ url, track_changes: 'true' });
      expect(first.status).to.equal(200);
      expect(first.headers.get('x-change-status'), path).to.equal('new');
      expect(first.headers.get('x-previous-fetched-at')).to.equal(null);
      const version = first.headers.get('x-change-version-id');
      const page = await first.text();
      const chunks = await changeBlobChunks(client.account.accountId);
      for (let again = 0; again < 2; again++) {
        const next = await client.fetch({ url, track_changes: 'true' });
        expect(next.headers.get('x-change-status'), path).to.equal('same');
        expect(next.headers.get('x-change-version-id')).to.equal(version);
        expect(next.headers.get('x-previous-fetched-at')).to.match(/^\d{4}-\d{2}-\d{2}T/);
        // The answer is the page as the site gave it this time: new noise, tracked as the same.
        expect(await next.text()).to.not.equal(page);
      }
      // An unchanged re-fetch adds no blob and no version.
      expect(await changeBlobChunks(client.account.accountId)).to.equal(chunks);
    }
    expect(await storedVersions(client.account.accountId)).to.equal(site.paths().length);
    expect(await client.used()).to.equal(3 * site.paths().length);
  });

  it('says what the noise was in a same answer, and reports a real edit as changed with the text diff and the field diff', async () => {
    const id = product();
    const url = site.url(id);
    const first = await client.tracked(url, { css_extractor: PRODUCT });
    expect(first.change).to.include({ status: 'new', previous_fetched_at: null });
    expect(first.change.diff).to.equal(null);
    const same = await client.tracked(url, { css_extractor: PRODUCT });
    expect(same.change.status).to.equal('same');
    expect(same.change.diff?.text).to.equal('');
    expect(same.change.diff?.fields).to.deep.equal({});
    const kinds = (same.change.diff?.ignored ?? []).map((run) => run.kind);
    expect(kinds).to.include.members(['timestamp', 'token', 'cache_buster']);

    const edit = site.edit(id, 'price');
    const changed = await client.tracked(url, { css_extractor: PRODUCT });
    expect(changed.change.status).to.equal('changed');
    expect(changed.change.version_id).to.not.equal(first.change.version_id);
    const lines = (changed.change.diff?.text ?? '').split('\n');
    expect(lines).to.include(`-${edit.removed[0] ?? ''}`);
    expect(lines).to.include(`+${edit.added[0] ?? ''}`);
    expect(changed.change.diff).to.include({ added: 1, removed: 1 });
    expect(changed.change.diff?.fields).to.deep.equal({ price: { previous: edit.removed[0], current: edit.added[0] } });
    const history = await client.history({ url });
    expect(changed.change.previous_fetched_at).to.equal(history.body.versions[1].fetched_at);

    const word = site.edit(id, 'word in a paragraph');
    const reworded = await client.tracked(url, { css_extractor: PRODUCT });
    expect(reworded.change.status).to.equal('changed');
    expect(reworded.change.diff?.fields).to.deep.equal({});
    expect(reworded.change.diff?.text.split('\n')).to.include.members([`-${word.removed[0] ?? ''}`, `+${word.added[0] ?? ''}`]);
    expect((await client.tracked(url)).change.status).to.equal('same');
  });

  it('finds a page answered with the same bytes the same without a word of noise, and an edit of it changed', async () => {
    const id = page(7);
    const url = `${site.origin}/static/${id}`;
    expect((await client.tracked(url)).change.status).to.equal('new');
    const same = await client.tracked(url);
    expect(same.change).to.include({ status: 'same' });
    expect(same.change.diff).to.deep.include({ text: '', ignored: [], added: 0, removed: 0 });
    const edit = site.edit(id, 'list item added');
    const changed = await client.tracked(url);
    expect(changed.change.status).to.equal('changed');
    expect(changed.change.diff?.text.split('\n')).to.include(`+${edit.added[0] ?? ''}`);
  });

  it('answers as_of from the stored page, every output computed from it, with no request to the site and no credit', async () => {
    const id = product();
    const url = site.url(id);
    const first = await client.tracked(url);
    site.edit(id, 'heading changed');
    const second = await client.tracked(url);
    expect(second.change.status).to.equal('changed');
    const { versions } = (await client.history({ url })).body as { versions: Array<{ version_id: string; fetched_at: string }> };
    const [newest, oldest] = versions as [{ version_id: string; fetched_at: string }, { version_id: string; fetched_at: string }];
    expect(oldest.version_id).to.equal(first.change.version_id);
    const hits = site.hits(`/p/${id}`);
    const used = await client.used();

    const asOf = async (as_of: string, params: Record<string, string> = {}): Promise<{ body: string; response: Response }> => {
      const response = await client.fetch({ url, as_of, ...params });
      const body = await response.text();
      expect(response.status, body.slice(0, 300)).to.equal(200);
      expect(response.headers.get('x-request-cost')).to.equal('0');
      return { body, response };
    };
    const old = first.html;
    const html = await asOf(oldest.version_id);
    expect(html.body).to.equal(old);
    expect(html.response.headers.get('x-change-version-id')).to.equal(oldest.version_id);
    expect(html.response.headers.get('x-version-fetched-at')).to.equal(oldest.fetched_at);
    expect((await asOf(oldest.version_id, { response_type: 'markdown' })).body).to.equal(toMarkdown(old, url));
    expect((await asOf(oldest.version_id, { response_type: 'plaintext' })).body).to.equal(toPlainText(old));
    const css = cssExtract(old, url, PRODUCT);
    expect(JSON.parse((await asOf(oldest.version_id, { css_extractor: PRODUCT })).body)).to.deep.equal(css.ok ? css.data : null);
    expect(JSON.parse((await asOf(oldest.version_id, { autoparse: 'true' })).body)).to.deep.equal(JSON.parse(JSON.stringify(autoparse(old, url))));
    expect((await asOf(oldest.version_id, { main_content: 'true', response_type: 'markdown' })).body).to.equal(renderMainContent(findMainContent(old, url), 'markdown'));
    const envelope = JSON.parse((await asOf(oldest.version_id, { json_response: 'true' })).body) as { html: string; as_of: { version_id: string } };
    expect(envelope.html).to.equal(old);
    expect(envelope.as_of.version_id).to.equal(oldest.version_id);

    // By time: the version current then.
    const between = new Date((Date.parse(oldest.fetched_at) + Date.parse(newest.fetched_at)) / 2).toISOString();
    expect((await asOf(between)).body).to.equal(old);
    expect((await asOf(newest.fetched_at)).body).to.equal(second.html);
    expect((await asOf('2999-01-01T00:00:00+02:00')).body).to.equal(second.html);
    const before = await expectProblemCode(await client.fetch({ url, as_of: '2001-01-01T00:00:00Z' }));
    expect([before.status, before.code]).to.deep.equal([404, 'version_not_found']);
    expect(before.detail).to.contain(oldest.fetched_at);

    expect(site.hits(`/p/${id}`)).to.equal(hits);
    expect(await client.used()).to.equal(used);
  });

  it('keeps an account’s history to itself, and a tagged history apart from the untagged one', async () => {
    const url = site.url(page(1));
    const mine = await client.tracked(url);
    const other = historyClient(await fetchAccount());
    const hits = site.hits(`/p/${page(1)}`);
    for (const as_of of [mine.change.version_id, '2999-01-01T00:00:00Z']) {
      const refused = await expectProblemCode(await other.fetch({ url, as_of }));
      expect([refused.status, refused.code]).to.deep.equal([404, 'version_not_found']);
    }
    expect((await other.history({ url })).status).to.equal(404);
    expect(site.hits(`/p/${page(1)}`)).to.equal(hits);
    // The other account's first fetch starts its own history.
    expect((await other.tracked(url)).change.status).to.equal('new');
    expect((await client.tracked(url)).change.status).to.equal('same');

    const tagged = await client.tracked(url, { change_tracking_tag: 'mobile' });
    expect(tagged.change.status).to.equal('new');
    expect(tagged.change.version_id).to.not.equal(mine.change.version_id);
    expect((await client.history({ url, change_tracking_tag: 'mobile' })).body.versions).to.have.length(1);
    const wrongTag = await expectProblemCode(await client.fetch({ url, as_of: mine.change.version_id, change_tracking_tag: 'mobile' }));
    expect(wrongTag.code).to.equal('version_not_found');
  });

  it('lists versions newest first with cursors, and deletes a URL’s history, then all of it', async () => {
    const id = page(2);
    const url = site.url(id);
    await client.tracked(url);
    for (const edit of ['paragraph added', 'list item added', 'table cell changed']) {
      site.edit(id, edit);
      expect((await client.tracked(url)).change.status, edit).to.equal('changed');
    }
    const first = await client.history({ url, limit: '2' });
    expect(first.status).to.equal(200);
    expect(first.body.versions.map((version: { status: string }) => version.status)).to.deep.equal(['changed', 'changed']);
    expect(first.body.versions[0]).to.have.property('last_seen_at');
    expect(first.body.versions[0].content_hash).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(first.body.versions[0].size).to.be.greaterThan(1000);
    const second = await client.history({ url, limit: '2', cursor: first.body.next_cursor as string });
    expect(second.body.versions.map((version: { status: string }) => version.status)).to.deep.equal(['changed', 'new']);
    expect(second.body.next_cursor).to.equal(null);
    const fetchedAt = [...first.body.versions, ...second.body.versions].map((version: { fetched_at: string }) => version.fetched_at);
    expect([...fetchedAt].sort().reverse()).to.deep.equal(fetchedAt);
    const foreign = await client.history({ url: site.url(page(3)), cursor: first.body.next_cursor as string });
    expect([foreign.status, foreign.body.code, foreign.body.parameter]).to.deep.equal([400, 'REQS004', 'cursor']);

    await client.tracked(site.url(page(3)));
    const removed = await client.history({ url }, 'DELETE');
    expect([removed.status, removed.body.deleted_urls]).to.deep.equal([200, 1]);
    expect((await client.history({ url })).status).to.equal(404);
    expect((await expectProblemCode(await client.fetch({ url, as_of: '2999-01-01T00:00:00Z' }))).code).to.equal('version_not_found');
    expect((await client.tracked(url)).change.status).to.equal('new');
    expect((await client.history({ url: site.url(page(3)) })).status).to.equal(200);

    const all = await client.history({}, 'DELETE');
    expect(all.body.deleted_urls).to.equal(2);
    expect((await client.history({ url: site.url(page(3)) })).status).to.equal(404);
    expect(await storedVersions(client.account.accountId)).to.equal(0);
    expect(await changeBlobChunks(client.account.accountId)).to.equal(0);
  });

  const refusals: Array<[string, Record<string, string>, string]> = [
    ['as_of with track_changes', { as_of: '2026-01-01T00:00:00Z', track_changes: 'true' }, 'as_of'],
    ['a tag without track_changes or as_of', { change_tracking_tag: 'a' }, 'change_tracking_tag'],
    ['a tag of characters it does not take', { track_changes: 'true', change_tracking_tag: 'a b' }, 'change_tracking_tag'],
    ['an as_of that is no time', { as_of: 'yesterday' }, 'as_of'],
    ['an as_of time without its offset', { as_of: '2026-01-01T00:00:00' }, 'as_of'],
    ['an as_of that is no version id', { as_of: 'v1.abc' }, 'as_of'],
    ['as_of with a screenshot', { as_of: '2026-01-01T00:00:00Z', js_render: 'true', screenshot: 'true' }, 'as_of'],
    ['a track_changes that is no boolean', { track_changes: 'often' }, 'track_changes'],
  ];
  for (const [name, params, parameter] of refusals) {
    it(`refuses ${name} with REQS004 naming ${parameter}, fetching nothing`, async () => {
      const before = site.server.requests.length;
      const refused = await expectProblemCode(await client.fetch({ url: site.url(page(0)), ...params }));
      expect([refused.status, refused.code, refused.parameter]).to.deep.equal([400, 'REQS004', parameter]);
      expect(site.server.requests.length).to.equal(before);
    });
  }

  it('is documented in the OpenAPI document as an extension', async () => {
    type Operation = { parameters?: Array<{ name: string; schema?: { description?: string } }>; responses?: Record<string, { headers?: Record<string, unknown> }> };
    const document = (await (await fetch(`${testStack().urls.api}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const fetchGet = document.paths['/v1/']?.get;
    for (const name of ['track_changes', 'change_tracking_tag', 'as_of']) {
      expect(fetchGet?.parameters?.find((parameter) => parameter.name === name)?.schema?.description, name).to.contain('Extension of this service');
    }
    expect(fetchGet?.responses?.['200']?.headers).to.have.property('X-Change-Status');
    expect(document.paths['/v1/history']).to.have.keys(['get', 'delete']);
    expect(document.paths['/v1/crawls']?.post).to.be.an('object');
  });

  it('records Batch tasks with track_changes in zenrows_params: each result says its change status', async () => {
    const account = await batchAccount();
    const job = async (): Promise<string[]> => {
      const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
        type: 'regular',
        status: 'closed',
        zenrows_params: { track_changes: true },
        tasks: [{ url: site.url(page(4)) }, { url: site.url(page(5)) }],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const run = await waitForRun(account.key, created.body.job_id as string);
      const rows = await allResults(account.key, `/v1/jobs/${created.body.job_id as string}/results`);
      expect(run.stats, JSON.stringify(rows)).to.deep.include({ total: 2, successful: 2 });
      return [site.url(page(4)), site.url(page(5))].map((url) => rows.find((row) => row.url === url)?.change_status as string);
    };
    expect(await job()).to.deep.equal(['new', 'new']);
    site.edit(page(5), 'paragraph removed');
    expect(await job()).to.deep.equal(['same', 'changed']);
    const asOfTask = await batchRequest(account.key, 'POST', '/v1/jobs', { zenrows_params: { as_of: '2026-01-01T00:00:00Z' }, tasks: [{ url: site.url(page(4)) }] });
    expect(asOfTask.status).to.equal(400);
    expect(asOfTask.body.detail).to.contain('as_of');
  });

  it('adds the outcome to the MCP fetch_page tool’s answer', async () => {
    const account = await fetchAccount();
    const mcp = new Client({ name: 'fetchplane-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${testStack().urls.api}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    try {
      const call = async (): Promise<CallToolResult> => (await mcp.callTool({ name: 'fetch_page', arguments: { url: site.url(page(6)), track_changes: true, main_content: false } })) as CallToolResult;
      const parts = (result: CallToolResult): string[] => result.content.map((part) => (part.type === 'text' ? part.text : ''));
      const first = parts(await call());
      expect(first).to.have.length(2);
      expect(first[0]).to.contain(`# ${site.model(page(6)).title}`);
      expect((JSON.parse(first[1] ?? '{}') as { change_tracking: { status: string } }).change_tracking.status).to.equal('new');
      const again = parts(await call());
      expect((JSON.parse(again[1] ?? '{}') as { change_tracking: { status: string } }).change_tracking.status).to.equal('same');
    } finally {
      await mcp.close();
    }
  });
});
