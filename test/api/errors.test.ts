import net from 'node:net';
import { expect } from 'chai';
import { ERROR_CATALOGUE, problem } from '../../base/errors';
import type { Route } from '../../api/http/routes';
import { startApp, type TestApp } from '../helpers/app';
import { testStack } from '../helpers/stack';
import { parseRaw, rawExchange } from '../helpers/raw-http';

const PROBLEM = 'application/problem+json';

async function expectProblem(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  expect(response.status).to.equal(status);
  expect(response.headers.get('content-type')).to.equal(PROBLEM);
  const requestId = response.headers.get('x-request-id');
  expect(requestId).to.match(/^[\w.:-]+$/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.code).to.equal(code);
  expect(body.status).to.equal(status);
  expect(body.title).to.be.a('string').and.match(new RegExp(` \\(${code}\\)$`));
  expect(body.detail).to.be.a('string').and.not.equal('');
  expect(body.type).to.match(new RegExp(`/docs/api-error-codes#${code}$`));
  expect(body.instance).to.equal(`urn:service:request:${requestId}`);
  return body;
}

describe('the error envelope', () => {
  describe('on the running service', () => {
    it('answers an unknown route with a 404 problem document and a request id', async () => {
      const response = await fetch(`${testStack().urls.api}/v1/no-such-thing`);
      await expectProblem(response, 404, 'not_found');
    });

    it('answers a known path with a wrong method with 405', async () => {
      const response = await fetch(`${testStack().urls.api}/healthz`, { method: 'DELETE' });
      await expectProblem(response, 405, 'method_not_allowed');
    });

    it('answers unknown query parameters on a strict route with unknown_parameter', async () => {
      const response = await fetch(`${testStack().urls.api}/readyz?verbose=1`);
      const body = await expectProblem(response, 400, 'unknown_parameter');
      expect(body.detail).to.contain('verbose');
    });

    it('answers with a request id of its own, whatever the caller sent', async () => {
      for (const given of ['trace-42', 'a b<script>', '']) {
        const answered = await fetch(`${testStack().urls.api}/healthz`, { headers: given ? { 'X-Request-Id': given } : {} });
        expect(answered.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      }
    });

    it('answers oversized request headers with a 431 problem document', async () => {
      const { port } = new URL(testStack().urls.api);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => {
          socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
        });
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(raw).to.match(/^HTTP\/1\.1 431 /);
      expect(raw).to.contain(`Content-Type: ${PROBLEM}\r\n`);
      const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { code: string };
      expect(body.code).to.equal('request_header_fields_too_large');
    });

    it('serves the error catalogue that every type link points to', async () => {
      const page = await (await fetch(`${testStack().urls.api}/docs/api-error-codes`)).text();
      for (const code of Object.keys(ERROR_CATALOGUE)) expect(page).to.contain(`id="${code}"`);
    });
  });

  describe('on declared routes', () => {
    let app: TestApp;
    const seen: unknown[] = [];
    const routes = (): Route[] => [
      {
        method: 'POST',
        path: '/v1/widgets',
        operationId: 'createWidget',
        summary: 'test route',
        tags: ['Test'],
        query: { type: 'object', additionalProperties: false, properties: { dry_run: { type: 'boolean' }, count: { type: 'integer', minimum: 1 } } },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string', minLength: 1 }, size: { type: 'integer', maximum: 10 } },
        },
        responses: { 201: { description: 'created' } },
        handler(ctx, input) {
          seen.push(input);
          ctx.status = 201;
          ctx.body = { query: input.query, body: input.body };
        },
      },
      {
        method: 'GET',
        path: '/v1/explode',
        operationId: 'explode',
        summary: 'test route',
        tags: ['Test'],
        responses: { 200: { description: 'never' } },
        handler() {
          throw new Error('database password is hunter2');
        },
      },
      {
        method: 'GET',
        path: '/v1/teapot',
        operationId: 'teapot',
        summary: 'test route',
        tags: ['Test'],
        responses: { 200: { description: 'never' } },
        handler() {
          throw problem('too_many_crawls', 'Three crawls are running.', { headers: { 'Retry-After': '30' } });
        },
      },
    ];

    before(async () => {
      app = await startApp(routes, { env: { BODY_LIMIT: '1kb', OPERATOR_TOKEN: 'test-operator', SERVER_HEADERS_TIMEOUT_MS: '1000', SERVER_REQUEST_TIMEOUT_MS: '2000' } });
    });
    after(async () => app.close());
    beforeEach(() => (seen.length = 0));

    const post = (path: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
      fetch(`${app.url}${path}`, { method: 'POST', body, headers });

    it('passes a valid request through with query values coerced case-insensitively', async () => {
      const response = await post('/v1/widgets?dry_run=True&count=3', JSON.stringify({ name: 'a', size: 2 }));
      expect(response.status).to.equal(201);
      expect(await response.json()).to.deep.equal({ query: { dry_run: true, count: 3 }, body: { name: 'a', size: 2 } });
    });

    it('refuses a body that is not JSON, not an object, or empty of required fields', async () => {
      await expectProblem(await post('/v1/widgets', '{"name":'), 400, 'invalid_request');
      await expectProblem(await post('/v1/widgets', '["name"]'), 400, 'invalid_request');
      const missing = await expectProblem(await post('/v1/widgets', '{}'), 400, 'invalid_parameter');
      expect(missing.detail).to.contain('name');
      expect(seen).to.have.length(0);
    });

    it('names an unknown body field or query parameter', async () => {
      const field = await expectProblem(await post('/v1/widgets', JSON.stringify({ name: 'a', colour: 'red' })), 400, 'unknown_parameter');
      expect(field.detail).to.contain('colour');
      const param = await expectProblem(await post('/v1/widgets?verbose=1', JSON.stringify({ name: 'a' })), 400, 'unknown_parameter');
      expect(param.detail).to.contain('verbose');
      expect(seen).to.have.length(0);
    });

    it('names a value of the wrong type or out of range', async () => {
      const bool = await expectProblem(await post('/v1/widgets?dry_run=maybe', JSON.stringify({ name: 'a' })), 400, 'invalid_parameter');
      expect(bool.detail).to.contain('dry_run');
      const range = await expectProblem(await post('/v1/widgets', JSON.stringify({ name: 'a', size: 11 })), 400, 'invalid_parameter');
      expect(range.detail).to.contain('size');
    });

    it('refuses a body over the size limit with 413 before reading it', async () => {
      await expectProblem(await post('/v1/widgets', JSON.stringify({ name: 'x'.repeat(2048) })), 413, 'payload_too_large');
      expect(seen).to.have.length(0);
    });

    it('answers a chunked body over the limit with 413, not a reset', async () => {
      const chunk = 'x'.repeat(600);
      const raw = await rawExchange(
        app.url,
        `POST /v1/widgets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `258\r\n${chunk}\r\n258\r\n${chunk}\r\n258\r\n${chunk}\r\n0\r\n\r\n`,
      );
      const answer = parseRaw(raw);
      expect([answer.status, answer.headers['content-type'], answer.body.code]).to.deep.equal([413, PROBLEM, 'payload_too_large']);
      expect(seen).to.have.length(0);
    });

    it('counts a body the client broke as the 4xx it got, not as a 500', async () => {
      const raw = await rawExchange(
        app.url,
        `POST /v1/widgets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\nzz\r\n`,
      );
      expect(parseRaw(raw).status).to.equal(400);
      const metrics = await (await fetch(`${app.url}/metrics`, { headers: { Authorization: 'Bearer test-operator' } })).text();
      expect(metrics).to.match(/http_requests_total\{method="POST",route="\/v1\/widgets",status="400"\} \d+/);
      expect(metrics).to.not.match(/status="5\d\d"/);
      expect(seen).to.have.length(0);
    });

    it('answers 408 with a problem document to a client that sends its request too slowly', async () => {
      // Headers that never end, then a body that never ends: both are cut at the configured time-outs.
      const headers = parseRaw(await rawExchange(app.url, 'GET /v1/explode HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n'));
      expect([headers.status, headers.headers['content-type'], headers.body.code]).to.deep.equal([408, PROBLEM, 'request_timeout']);
      const body = parseRaw(await rawExchange(app.url, 'POST /v1/widgets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":'));
      expect(body.status).to.equal(408);
      expect(seen).to.have.length(0);
    });

    it('refuses a body not declared as JSON with 415', async () => {
      await expectProblem(await post('/v1/widgets', JSON.stringify({ name: 'a' }), { 'Content-Type': 'text/plain;charset=UTF-8' }), 415, 'unsupported_media_type');
      const vendor = await post('/v1/widgets', JSON.stringify({ name: 'a' }), { 'Content-Type': 'application/vnd.api+json' });
      expect(vendor.status).to.equal(201);
      expect(seen).to.have.length(1);
    });

    it('hides the internals of an unexpected error behind a generic 500', async () => {
      const response = await fetch(`${app.url}/v1/explode`);
      const body = await expectProblem(response, 500, 'internal_error');
      expect(JSON.stringify(body)).not.to.contain('hunter2');
    });

    it('carries the headers an error asks for', async () => {
      const response = await fetch(`${app.url}/v1/teapot`);
      await expectProblem(response, 429, 'too_many_crawls');
      expect(response.headers.get('retry-after')).to.equal('30');
    });
  });
});
