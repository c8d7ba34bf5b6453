/**
 * The Extract endpoints under `/v1/extract/`: the domains served, and domain preparation (submit, read,
 * list with the allowance, the allowance alone). None costs credits. Errors of the prepared-domains
 * endpoints carry a `reason` tag.
 */
import { problem } from '../../base/errors';
import { registrableDomainOf } from '../../engine';
import { API_KEY_QUERY_PROPERTY, authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import { issuesAs, type IssueMapper, type ObjectSchema, type ResponseSpec, type Route } from '../http/routes';

const MAX_EXAMPLE_URLS = 10;

const reasonFor = (field: string): string => (field.startsWith('example_urls') ? 'invalid_example_urls' : field === 'domain' ? 'invalid_domain' : 'invalid_body');

export const preparedIssues: IssueMapper = issuesAs('invalid_argument', (issue) => ({
  reason: issue.kind === 'malformed_body' ? 'malformed_body' : issue.kind === 'unknown' ? 'unknown_field' : reasonFor(issue.field),
}));

const json = (description: string, schema: Record<string, unknown>): ResponseSpec => ({ description, content: { 'application/json': { schema } } });

const KEY_QUERY: ObjectSchema = { type: 'object', additionalProperties: false, properties: { apikey: API_KEY_QUERY_PROPERTY } };

export const SUBMIT_BODY: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['domain'],
  properties: {
    domain: { type: 'string', minLength: 1, maxLength: 253, description: 'Registrable domain, without scheme or path (`acme-homes.com`); it covers every subdomain.' },
    example_urls: { type: 'array', maxItems: MAX_EXAMPLE_URLS, items: { type: 'string', minLength: 1, maxLength: 2048 }, description: 'One URL per kind of page to prepare, on the domain; replaces discovery.' },
  },
};

const ROLE = { type: 'object', properties: { role: { type: 'string' }, status: { type: 'string' }, url: { type: 'string' }, detail: { type: 'string' } } };
const RECORD = {
  type: 'object',
  required: ['domain', 'status', 'state', 'submitted_at', 'updated_at'],
  properties: {
    domain: { type: 'string' },
    status: { type: 'string', enum: ['preparing', 'ready', 'failed'] },
    state: { type: 'string', description: '`received`, `discovering`, `preparing`, `verifying`, `ready`, `failed`; more may be added.' },
    roles: { type: 'array', items: ROLE },
    failure: { type: 'object', properties: { code: { type: 'string' }, detail: { type: 'string' }, slot_consumed: { type: 'boolean' } } },
    submitted_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
const ALLOWANCE = { type: 'object', required: ['used', 'limit', 'remaining', 'month'], properties: { used: { type: 'integer' }, limit: { type: 'integer' }, remaining: { type: 'integer' }, month: { type: 'string' } } };

/** `Acme-Homes.com.` → `acme-homes.com`; anything that is not a registrable domain is refused. */
export function normalizeDomain(raw: string): string {
  const domain = raw.trim().toLowerCase().replace(/\.$/, '');
  if (/[/:?#@\s]/.test(domain) || !/^[a-z0-9.-]+$/.test(domain) || registrableDomainOf(domain) !== domain) {
    throw problem('invalid_argument', `"domain" must be a registrable domain without scheme, port or path (for example acme-homes.com), not "${raw.slice(0, 100)}".`, {
      members: { reason: 'invalid_domain' },
    });
  }
  return domain;
}

export function checkExamples(domain: string, urls: readonly string[]): string[] {
  return urls.map((raw, index) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw problem('invalid_argument', `example_urls[${index}] is not an absolute URL.`, { members: { reason: 'invalid_example_urls' } });
    }
    if (!/^https?:$/.test(url.protocol) || registrableDomainOf(url.hostname) !== domain) {
      throw problem('invalid_argument', `example_urls[${index}] must be an http(s) URL on ${domain}.`, { members: { reason: 'invalid_example_urls' } });
    }
    return url.href;
  });
}

export function extractRoutes(deps: ApiDeps): Route[] {
  const commands = deps.services.extract;
  const prepared = { tags: ['Extract'], security: securityOf('prepared-domains'), before: [authenticate(deps, 'prepared-domains')], issues: preparedIssues, query: KEY_QUERY };
  const errors = {
    400: { description: 'invalid_argument (with `reason`)' },
    401: { description: 'API key missing or invalid (unauthenticated)' },
    503: { description: 'A component is down, or no worker runs for work to start (service_unavailable, with Retry-After)' },
  };
  return [
    {
      tags: ['Extract'],
      security: securityOf('extract'),
      before: [authenticate(deps, 'extract')],
      query: KEY_QUERY,
      method: 'GET',
      path: '/v1/extract/domains',
      operationId: 'listExtractDomains',
      summary: 'Every domain Extract serves now.',
      responses: {
        200: json('Domains ready for extract=auto', { type: 'object', properties: { domains: { type: 'array', items: { type: 'object', properties: { domain: { type: 'string' }, verticals: { type: 'array', items: { type: 'string' } }, warm: { type: 'boolean' } } } } } }),
        401: { description: 'API key missing, malformed or unknown' },
      },
      async handler(ctx) {
        ctx.body = { domains: await commands.served() };
      },
    },
    {
      ...prepared,
      method: 'GET',
      path: '/v1/extract/prepared-domains/allowance',
      operationId: 'preparationAllowance',
      summary: 'Preparation slots of this UTC month.',
      responses: { 200: json('The allowance', ALLOWANCE), ...errors },
      async handler(ctx) {
        ctx.body = await commands.allowance(principalOf(ctx));
      },
    },
    {
      ...prepared,
      method: 'POST',
      path: '/v1/extract/prepared-domains',
      operationId: 'prepareDomain',
      summary: 'Prepare a domain for extract=auto.',
      description: 'Answers 202 with the record in `received`, or the current record of a domain already prepared (spending nothing). Header `Idempotency-Key`: the same key and body return the original submission.',
      body: SUBMIT_BODY,
      responses: {
        202: json('The record', RECORD),
        ...errors,
        409: { description: 'in_progress (a preparation of the domain runs) or idempotency_conflict' },
        429: { description: 'out_of_allowance' },
      },
      async handler(ctx, input) {
        const body = input.body as { domain: string; example_urls?: string[] };
        const domain = normalizeDomain(body.domain);
        const exampleUrls = checkExamples(domain, body.example_urls ?? []);
        const key = ctx.headers['idempotency-key'];
        if (typeof key === 'string' && (key.length === 0 || key.length > 255)) {
          throw problem('invalid_argument', 'Idempotency-Key must be 1 to 255 characters.', { members: { reason: 'invalid_idempotency_key' } });
        }
        // Work accepted while no worker runs would not move (readiness.ts): refused with 503 instead.
        await deps.readiness.requireWorker();
        ctx.status = 202;
        ctx.body = await commands.submit(principalOf(ctx), { domain, ...(exampleUrls.length > 0 ? { example_urls: exampleUrls } : {}) }, typeof key === 'string' ? key : undefined);
      },
    },
    {
      ...prepared,
      method: 'GET',
      path: '/v1/extract/prepared-domains',
      operationId: 'listPreparedDomains',
      summary: 'This account’s submissions and its allowance.',
      responses: { 200: json('Allowance and records', { type: 'object', properties: { allowance: ALLOWANCE, domains: { type: 'array', items: RECORD } } }), ...errors },
      async handler(ctx) {
        ctx.body = await commands.list(principalOf(ctx));
      },
    },
    {
      ...prepared,
      method: 'GET',
      path: '/v1/extract/prepared-domains/{domain}',
      operationId: 'preparedDomainStatus',
      summary: 'The preparation record of a domain this account submitted.',
      responses: { 200: json('The record', RECORD), ...errors, 404: { description: 'not_found: this account never submitted the domain' } },
      async handler(ctx, input) {
        // The router decodes path parameters already: decoding again would throw on a literal '%'.
        const raw = input.params.domain ?? '';
        let domain: string;
        try {
          domain = normalizeDomain(raw);
        } catch {
          throw problem('not_found', `This account never submitted ${raw.slice(0, 100)}.`, { members: { reason: 'not_found' } });
        }
        ctx.body = await commands.read(principalOf(ctx), domain);
      },
    },
  ];
}
