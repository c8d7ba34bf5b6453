import { ERROR_CATALOGUE } from '../../core/errors';
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

/** `routes` is read when the document is asked for, so it lists every route the app mounted. */
export function docsRoutes(options: { routes: () => Route[]; serverUrl: string }): Route[] {
  let openapi: string | undefined;
  const page = errorCodesPage();
  return [
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
