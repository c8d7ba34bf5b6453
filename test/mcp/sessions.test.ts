/**
 * The MCP session records (core/mcp/sessions.ts) on the stack's store: what a process finds is what
 * another opened, the idle deadline moves with use and ends the session, and an unreachable store is
 * told apart from a bug.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../base/db';
import { createLogger } from '../../base/log';
import { McpSessions, McpStoreUnavailable, type McpInitialize } from '../../core/mcp/sessions';
import { serviceConfig } from '../helpers/app';

const INITIALIZE: McpInitialize = {
  protocolVersion: '2025-06-18',
  // A key no document field could hold: the parameters are kept as JSON.
  capabilities: { experimental: { 'dotted.key': { $weird: true } } },
  clientInfo: { name: 'sessions-test', version: '1.2.3' },
};

describe('MCP session records', () => {
  let db: Database;
  let now = Date.now();
  let sessions: McpSessions;

  before(async () => {
    db = await openDatabase(serviceConfig(), createLogger('error', {}, () => undefined));
    sessions = new McpSessions(db.db, 60_000, () => now);
  });
  after(async () => {
    await db.close();
  });

  it('finds a session another store instance opened, with what the client sent', async () => {
    const id = randomUUID();
    await new McpSessions(db.db, 60_000, () => now).open({ id, accountId: 'a_sessions', keyId: 'k_sessions', initialize: INITIALIZE });
    const found = await sessions.find(id);
    expect(found).to.deep.include({ id, accountId: 'a_sessions', keyId: 'k_sessions', initialize: INITIALIZE });
    expect(await sessions.find(randomUUID())).to.equal(undefined);
  });

  it('ends a session after its idle time, unless it was used; DELETE ends it at once', async () => {
    const idle = randomUUID();
    const used = randomUUID();
    const deleted = randomUUID();
    for (const id of [idle, used, deleted]) await sessions.open({ id, accountId: 'a_sessions', keyId: 'k_sessions', initialize: INITIALIZE });
    now += 40_000;
    await sessions.touch(used);
    await sessions.end(deleted);
    expect(await sessions.find(deleted)).to.equal(undefined);
    now += 30_000;
    expect(await sessions.find(idle), 'idle for 70 s of 60').to.equal(undefined);
    expect(await sessions.find(used), 'used 30 s ago').to.not.equal(undefined);
    expect(await sessions.sweep()).to.be.greaterThanOrEqual(1);
    expect(await db.db.collection('mcp_sessions').countDocuments({ _id: { $in: [idle, deleted] } as never })).to.equal(0);
    expect(await db.db.collection('mcp_sessions').countDocuments({ _id: used as never })).to.equal(1);
  });

  it('reports an unreachable store as McpStoreUnavailable', async () => {
    const lost = await openDatabase(serviceConfig(), createLogger('error', {}, () => undefined));
    const store = new McpSessions(lost.db, 60_000);
    await lost.close();
    const error = await store.find(randomUUID()).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(McpStoreUnavailable);
  });
});
