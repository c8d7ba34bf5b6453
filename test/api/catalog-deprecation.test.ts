import { expect } from 'chai';
import { buildOpenApi } from '../../api/http/openapi';
import type { Route } from '../../api/http/routes';
import { problem } from '../../base/errors';
import { startApp, type TestApp } from '../helpers/app';
import { testStack } from '../helpers/stack';

describe('the API catalog and deprecation headers', () => {
  it('serves an RFC 9727 API catalog linking the OpenAPI document and the docs', async () => {
    const response = await fetch(`${testStack().urls.api}/.well-known/api-catalog`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"');
    const { linkset } = (await response.json()) as { linkset: Array<Record<string, Array<{ href: string }> | string>> };
    const entry = linkset[0] ?? {};
    const [desc] = entry['service-desc'] as Array<{ href: string }>;
    const [doc] = entry['service-doc'] as Array<{ href: string }>;
    // Every link of the catalog answers.
    for (const href of [desc?.href, doc?.href]) {
      const linked = await fetch(new URL(new URL(href ?? '').pathname, testStack().urls.api));
      expect(linked.status, href).to.equal(200);
    }
    expect(desc?.href).to.match(/\/v1\/openapi\.json$/);
    const head = await fetch(`${testStack().urls.api}/.well-known/api-catalog`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
  });

  describe('on a route marked deprecated in a test build', () => {
    let app: TestApp;
    const deprecated = { since: '2026-01-01T00:00:00Z', sunset: '2027-06-30T00:00:00Z', link: 'https://docs.example/migrate-widgets' };
    const routes = (): Route[] => [
      {
        method: 'GET',
        path: '/v1/old-widgets',
        operationId: 'oldWidgets',
        summary: 'test route',
        tags: ['Test'],
        deprecated,
        query: { type: 'object', additionalProperties: false, properties: { fail: { type: 'boolean' } } },
        responses: { 200: { description: 'widgets' } },
        handler(ctx, input) {
          if (input.query.fail === true) throw problem('not_found', 'No widgets.');
          ctx.body = { widgets: [] };
        },
      },
      { method: 'GET', path: '/v1/new-widgets', operationId: 'newWidgets', summary: 'test route', tags: ['Test'], responses: { 200: { description: 'widgets' } }, handler: (ctx) => void (ctx.body = { widgets: [] }) },
    ];

    before(async () => {
      app = await startApp(routes);
    });
    after(async () => app.close());

    it('answers with Deprecation, Sunset and Link, errors included; other routes carry none', async () => {
      for (const path of ['/v1/old-widgets', '/v1/old-widgets?fail=true', '/v1/old-widgets?unknown=1']) {
        const response = await fetch(`${app.url}${path}`);
        expect(response.headers.get('deprecation'), path).to.equal(`@${Date.parse(deprecated.since) / 1000}`);
        expect(response.headers.get('sunset'), path).to.equal('Wed, 30 Jun 2027 00:00:00 GMT');
        expect(response.headers.get('link'), path).to.equal('<https://docs.example/migrate-widgets>; rel="deprecation"; type="text/html"');
      }
      const current = await fetch(`${app.url}/v1/new-widgets`);
      expect(current.status).to.equal(200);
      expect(current.headers.get('deprecation')).to.equal(null);
      expect(current.headers.get('sunset')).to.equal(null);
    });

    it('marks the operation deprecated in the OpenAPI document, with its headers', () => {
      const document = buildOpenApi(routes(), { serverUrl: app.url }) as { paths: Record<string, Record<string, { deprecated?: boolean; responses: Record<string, { headers?: Record<string, unknown> }> }>> };
      const old = document.paths['/v1/old-widgets']?.get;
      expect(old?.deprecated).to.equal(true);
      expect(old?.responses['200']?.headers).to.have.keys('Deprecation', 'Sunset', 'Link');
      expect(document.paths['/v1/new-widgets']?.get?.deprecated).to.equal(undefined);
    });
  });
});
