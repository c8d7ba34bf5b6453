import { expect } from 'chai';
import { createApp } from '../../api/app';
import { newAccount, startApp, type TestApp } from '../helpers/app';
import { PAGE_HTML, startTargetSite, type TargetSite } from '../fixtures/target-site';

/** What a client can see of an answer, less what differs per request (ids, dates, costs already charged). */
async function seen(response: Response): Promise<{ status: number; headers: string[]; type: string | null; body: unknown }> {
  const text = await response.text();
  const type = response.headers.get('content-type');
  let body: unknown = text;
  if (type === 'application/problem+json') {
    const { instance, ...rest } = JSON.parse(text) as { instance: string };
    expect(instance).to.equal(`urn:service:request:${response.headers.get('x-request-id')}`);
    body = rest;
  }
  const headers = [...response.headers.keys()].filter((name) => !['date', 'x-request-id', 'keep-alive', 'connection'].includes(name)).sort();
  return { status: response.status, headers, type, body };
}

describe('the Fetch routes without Koa', () => {
  let site: TargetSite;
  let key: string;
  // The API's own listener (Fetch through http/lean.ts), and the same routes through Koa alone.
  let leanApp: TestApp;
  let koaApp: TestApp;
  before(async () => {
    site = await startTargetSite();
    leanApp = await startApp(undefined);
    koaApp = await startApp(undefined, { app: (deps) => createApp(deps).callback() });
    key = (await newAccount(leanApp.accounts)).key;
  });
  after(async () => {
    await leanApp?.close();
    await koaApp?.close();
    await site?.close();
  });

  const both = async (query: string, init?: RequestInit): Promise<[Awaited<ReturnType<typeof seen>>, Awaited<ReturnType<typeof seen>>]> => {
    const lean = await seen(await fetch(`${leanApp.url}/v1/?${query}`, init));
    const koa = await seen(await fetch(`${koaApp.url}/v1/?${query}`, init));
    return [lean, koa];
  };

  it('answers a page, its echoed headers and its cost as Koa does', async () => {
    const [lean, koa] = await both(`apikey=${key}&url=${encodeURIComponent(site.at('/cookies'))}`);
    expect(lean).to.deep.equal(koa);
    expect(lean.status).to.equal(200);
    expect(lean.headers).to.include.members(['z-set-cookie', 'zr-final-url', 'x-request-cost', 'concurrency-limit', 'content-length']);
    const [page] = await both(`apikey=${key}&url=${encodeURIComponent(site.at('/redirect/1'))}`);
    expect(page.body).to.equal(PAGE_HTML);
  });

  it('answers every kind of refusal with the same problem document and headers as Koa', async () => {
    const url = encodeURIComponent(site.at('/'));
    for (const query of [
      `url=${url}`,
      `url=${url}&apikey=nothex`,
      `url=${url}&apikey=${key}&js_render=maybe`,
      `url=${url}&apikey=${key}&url=${url}`,
      `url=${url}&apikey=${key}&__proto__=1`,
      `url=${encodeURIComponent(site.at('/status/404'))}&apikey=${key}`,
      `url=${encodeURIComponent(site.at('/status/503'))}&apikey=${key}`,
    ]) {
      const [lean, koa] = await both(query);
      expect(lean, query).to.deep.equal(koa);
      expect(lean.type, query).to.equal('application/problem+json');
    }
  });

  it('forwards a POST body as Koa does', async () => {
    const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' };
    const [lean, koa] = await both(`apikey=${key}&url=${encodeURIComponent(site.at('/echo'))}`, init);
    // The target saw the same request from both, from a port of its own each.
    const echoed = (side: typeof lean): unknown => ({ ...side, body: { ...(JSON.parse(side.body as string) as object), remotePort: 0 } });
    expect(echoed(lean)).to.deep.equal(echoed(koa));
    expect(JSON.parse(lean.body as string)).to.include({ method: 'POST', body: '{"a":1}' });
  });
});
