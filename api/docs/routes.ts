import { ERROR_CATALOGUE } from '../../base/errors';
import { buildOpenApi } from '../http/openapi';
import type { Route } from '../http/routes';

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The error catalogue as the page the `type` member of every problem document links to. */
function errorCodesPage(): string {
  const rows = Object.entries(ERROR_CATALOGUE)
    .map(
      ([code, entry]) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${entry.status}</td><td>${escapeHtml(entry.title)}</td><td>${escapeHtml(entry.meaning)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fetchplane error codes</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}td,th{padding:.3rem .6rem;text-align:left;vertical-align:top}tr:target{background:#ffd}</style>
</head><body><h1>Error codes</h1><p>Every error is an <code>application/problem+json</code> document whose <code>code</code> is one of these.</p>
<table><thead><tr><th>Code</th><th>Status</th><th>Title</th><th>Meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

/** The RFC 9727 profile of the API catalog's media type. */
export const API_CATALOG_PROFILE = 'https://www.rfc-editor.org/info/rfc9727';

/** RFC 9727: one linkset entry for the HTTP API, pointing at its description and its documentation. */
function apiCatalog(serverUrl: string, docsUrl: string): string {
  return JSON.stringify({
    linkset: [
      {
        anchor: `${serverUrl}/v1/`,
        'service-desc': [{ href: `${serverUrl}/v1/openapi.json`, type: 'application/openapi+json;version=3.1' }],
        'service-doc': [{ href: `${docsUrl}/api-error-codes`, type: 'text/html', title: 'Error codes' }],
        status: [{ href: `${serverUrl}/readyz`, type: 'application/json' }],
      },
    ],
  });
}

/** `routes` is read when the document is asked for, so it lists every route the app mounted. */
export function docsRoutes(options: { routes: () => Route[]; serverUrl: string; docsUrl?: string }): Route[] {
  let openapi: string | undefined;
  const page = errorCodesPage();
  const catalog = apiCatalog(options.serverUrl, options.docsUrl ?? `${options.serverUrl}/docs`);
  return [
    {
      method: 'GET',
      path: '/.well-known/api-catalog',
      operationId: 'getApiCatalog',
      summary: 'The API catalog (RFC 9727): where this API’s OpenAPI document and documentation are.',
      tags: ['Operations'],
      responses: {
        200: {
          description: 'A linkset (RFC 9264)',
          content: { 'application/linkset+json': { schema: { type: 'object', required: ['linkset'], properties: { linkset: { type: 'array', items: { type: 'object' } } } } } },
        },
      },
      handler(ctx) {
        ctx.set('Link', `<${options.serverUrl}/.well-known/api-catalog>; rel="api-catalog"`);
        ctx.set('Content-Type', `application/linkset+json; profile="${API_CATALOG_PROFILE}"`);
        ctx.body = catalog;
      },
    },
    {
      method: 'GET',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This OpenAPI 3.1 document.',
      tags: ['Operations'],
      internal: true,
      responses: { 200: { description: 'The document' } },
      handler(ctx) {
        openapi ??= JSON.stringify(buildOpenApi(options.routes(), { serverUrl: options.serverUrl }));
        ctx.type = 'application/json';
        ctx.body = openapi;
      },
    },
    {
      method: 'GET',
      path: '/docs/api-error-codes',
      operationId: 'getErrorCodes',
      summary: 'The error code catalogue.',
      tags: ['Operations'],
      internal: true,
      responses: { 200: { description: 'HTML page' } },
      handler(ctx) {
        ctx.type = 'text/html';
        ctx.body = page;
      },
    },
  ];
}
