/**
 * What an account's creations of the things it holds (MCP sessions, scheduled jobs, CSV inputs) and
 * their refusals ask of the database: only look-ups by key. On FerretDB any other filter reads every
 * document of the collection, all accounts' alike, so a free account creating as fast as its budget
 * allows would make each of its creations cost as much as the collection is large. The API runs in
 * this process on a client that reports every command it sends; the limits stay exact (the N+1st is
 * refused naming its limit) and the stored bytes are still summed over the account's other inputs.
 */
import { expect } from 'chai';
import type { CommandStartedEvent, Document } from 'mongodb';
import { newAccount, serviceConfig, startApp, type TestApp } from '../helpers/app';

/** The collections of the things created and of their limit slots. */
const WATCHED = new Set(['mcp_sessions', 'batch_job_inputs', 'batch_jobs', 'monitors', 'limit_slots']);
const LIMITS = 'mcp_sessions=2,scheduled_jobs=1,stored_inputs=2,stored_input_bytes=1kb,concurrent_exports=3,requests_per_second=100,request_burst=200,requests_in_flight=20,deadline_renders=5,monitors=3,monitor_urls=4';

/** The filters of a command that reads, counts, updates or deletes documents. */
function filtersOf(event: CommandStartedEvent): Document[] {
  const command = event.command;
  switch (event.commandName) {
    case 'find':
      return [(command.filter as Document | undefined) ?? {}];
    case 'count':
      return [(command.query as Document | undefined) ?? {}];
    case 'aggregate': {
      const first = (command.pipeline as Document[] | undefined)?.[0];
      return [(first?.$match as Document | undefined) ?? {}];
    }
    case 'findAndModify':
      return [(command.query as Document | undefined) ?? {}];
    case 'delete':
      return ((command.deletes as Array<{ q: Document }> | undefined) ?? []).map((one) => one.q);
    case 'update':
      return ((command.updates as Array<{ q: Document }> | undefined) ?? []).map((one) => one.q);
    default:
      return [];
  }
}

/** A filter the store answers from the key: `_id` equal to a value or `$in` a list. */
function byKey(filter: Document): boolean {
  const id = filter._id as unknown;
  if (id === undefined) return false;
  if (typeof id !== 'object' || id === null || id instanceof Date) return true;
  return Object.keys(id).every((operator) => operator === '$in' || operator === '$eq');
}

describe('creations and their refusals read by key only', function () {
  this.timeout(180_000);
  let app: TestApp;
  const scans: string[] = [];
  let recording = false;

  before(async () => {
    const url = serviceConfig().mongodbUrl ?? '';
    // Refusals not remembered: each one is decided in the database, as the first one after the memory ends.
    app = await startApp(undefined, { env: { MONGODB_URL: `${url}${url.includes('?') ? '&' : '?'}monitorCommands=true`, ACCOUNT_LIMITS: LIMITS, LIMIT_REFUSAL_MEMORY_MS: '0' } });
    app.db.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (!recording) return;
      const collection = event.command[event.commandName] as unknown;
      if (typeof collection !== 'string' || !WATCHED.has(collection)) return;
      for (const filter of filtersOf(event)) if (!byKey(filter)) scans.push(`${event.commandName} ${collection} ${JSON.stringify(filter)}`);
    });
  });
  after(async () => {
    await app?.close();
  });

  it('opens MCP sessions, schedules jobs, stores CSV inputs and makes monitors up to the limits, and refuses the next, without a filter other than the key', async () => {
    const free = await newAccount(app.accounts, { credits: 1_000_000 });
    const json = { 'X-API-Key': free.key, 'Content-Type': 'application/json' };
    const session = async () => {
      const response = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${free.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'reads', version: '1' } } }),
      });
      const text = await response.text();
      return [response.status, response.status === 429 ? (JSON.parse(text) as { error: { data: { limit?: string } } }).error.data.limit : undefined];
    };
    const scheduled = async () => {
      const response = await fetch(`${app.url}/v1/jobs`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'scheduled', schedule: { rate: { every: 1, unit: 'hour' } }, tasks: [{ url: 'http://127.0.0.1:9/x' }] }) });
      const body = (await response.json()) as { limit?: string };
      return [response.status, body.limit];
    };
    const input = async () => {
      const response = await fetch(`${app.url}/v1/job_inputs`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'csv', csv: { fields: { url: 0 } } }) });
      const body = (await response.json()) as { limit?: string; upload?: { url: string } };
      // The link names the service's public address: sent to this process's API instead, which has the limits above.
      const link = body.upload ? new URL(body.upload.url) : undefined;
      return { answer: [response.status, body.limit], upload: link ? `${app.url}${link.pathname}` : '' };
    };
    const upload = async (url: string, rows: number) => {
      const response = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: 'http://127.0.0.1:9/page-of-forty-bytes-or-so\n'.repeat(rows) });
      const text = await response.text();
      return [response.status, text ? (JSON.parse(text) as { limit?: string }).limit : undefined];
    };

    recording = true;
    expect([await session(), await session(), await session()]).to.deep.equal([[200, undefined], [200, undefined], [429, 'mcp_sessions']]);
    expect([await scheduled(), await scheduled()]).to.deep.equal([[201, undefined], [429, 'scheduled_jobs']]);
    const first = await input();
    const second = await input();
    expect([first.answer, second.answer, (await input()).answer]).to.deep.equal([[201, undefined], [201, undefined], [429, 'stored_inputs']]);
    // 1 kB stored at most: 600 bytes fit, 600 more beside them do not.
    expect(await upload(first.upload, 13)).to.deep.equal([200, undefined]);
    expect(await upload(second.upload, 13)).to.deep.equal([429, 'stored_input_bytes']);

    // Monitors: 4 URLs at most, summed over the account's monitors when one is made or changed.
    const monitor = async (method: string, path: string, urls: string[]) => {
      const response = await fetch(`${app.url}${path}`, { method, headers: json, body: JSON.stringify({ urls, schedule: { every: 1, unit: 'day' } }) });
      const body = (await response.json()) as { limit?: string; monitor_id?: string };
      return { answer: [response.status, body.limit], id: body.monitor_id };
    };
    const pages = (...names: string[]) => names.map((name) => `http://127.0.0.1:9/${name}`);
    const two = await monitor('POST', '/v1/monitors', pages('a', 'b'));
    expect(two.answer).to.deep.equal([201, undefined]);
    expect((await monitor('POST', '/v1/monitors', pages('c', 'd', 'e'))).answer).to.deep.equal([429, 'monitor_urls']);
    expect((await monitor('POST', '/v1/monitors', pages('c'))).answer).to.deep.equal([201, undefined]);
    // Its own URLs are not counted against a change: 2 → 3 fits beside the other monitor's 1.
    expect((await monitor('PATCH', `/v1/monitors/${two.id}`, pages('a', 'b', 'f'))).answer).to.deep.equal([200, undefined]);
    expect((await monitor('PATCH', `/v1/monitors/${two.id}`, pages('a', 'b', 'f', 'g'))).answer).to.deep.equal([429, 'monitor_urls']);
    recording = false;

    expect(scans).to.deep.equal([]);
  });
});
