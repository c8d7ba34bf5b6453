/**
 * MCP sessions (Streamable HTTP), in MongoDB so that every API process (a cluster child, a replica on
 * another machine) serves a session whichever of them opened it. A record is what a process needs to
 * rebuild the session's server and transport on demand: the account and key that opened it, and the
 * client's `initialize` parameters (protocol version, capabilities, client info) to replay.
 *
 * Writes are single-document: `open` inserts (the id is a fresh UUID), `touch` sets the idle deadline
 * (the last writer wins, which is right for a deadline), `end` and `sweep` delete. A record past its
 * deadline is refused even before a sweep removes it.
 */
import { MongoError, type Collection, type Db } from 'mongodb';
import type { IndexRegistration } from '../../base/db';

export const MCP_SESSION_INDEXES: IndexRegistration = {
  mcp_sessions: [
    { key: { expires_at: 1 }, name: 'expires_at' },
    { key: { account_id: 1 }, name: 'account' },
  ],
};

/** What the client sent in `initialize`, replayed verbatim when another process rebuilds the session. */
export interface McpInitialize {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: { name: string; version: string } & Record<string, unknown>;
}

export interface McpSessionDoc {
  _id: string;
  account_id: string;
  key_id: string;
  protocol_version: string;
  client_name: string;
  client_version: string;
  /** The `initialize` parameters as JSON: client capabilities may hold keys a document cannot. */
  initialize: string;
  created_at: Date;
  last_seen: Date;
  expires_at: Date;
}

/** The store could not be reached: the request may succeed when retried, so it is answered 503, not 500. */
export class McpStoreUnavailable extends Error {
  constructor(cause: unknown) {
    super(`MCP session store unreachable: ${(cause as Error).message}`, { cause });
  }
}

/** A store failure as McpStoreUnavailable; anything else (a bug) as it is. */
async function reaching<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw error instanceof MongoError ? new McpStoreUnavailable(error) : error;
  }
}

export interface McpSession {
  id: string;
  accountId: string;
  keyId: string;
  initialize: McpInitialize;
  lastSeen: number;
}

export class McpSessions {
  private readonly sessions: Collection<McpSessionDoc>;

  constructor(
    db: Db,
    /** A session no request touched for this long is over. */
    readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sessions = db.collection<McpSessionDoc>('mcp_sessions');
  }

  async open(session: { id: string; accountId: string; keyId: string; initialize: McpInitialize }): Promise<void> {
    const now = this.now();
    await reaching(() => this.sessions.insertOne({
      _id: session.id,
      account_id: session.accountId,
      key_id: session.keyId,
      protocol_version: session.initialize.protocolVersion,
      client_name: session.initialize.clientInfo.name,
      client_version: session.initialize.clientInfo.version,
      initialize: JSON.stringify(session.initialize),
      created_at: new Date(now),
      last_seen: new Date(now),
      expires_at: new Date(now + this.idleMs),
    }));
  }

  /** The live session with this id; undefined when it never existed, was ended or is past its deadline. */
  async find(id: string): Promise<McpSession | undefined> {
    const doc = await reaching(() => this.sessions.findOne({ _id: id }));
    if (!doc || doc.expires_at.getTime() <= this.now()) return undefined;
    return { id: doc._id, accountId: doc.account_id, keyId: doc.key_id, initialize: JSON.parse(doc.initialize) as McpInitialize, lastSeen: doc.last_seen.getTime() };
  }

  /** Of the sessions `ids`, which are still open and which are past their deadline (absent: no record). */
  async states(ids: string[]): Promise<Map<string, 'live' | 'ended'>> {
    const docs = await reaching(() => this.sessions.find({ _id: { $in: ids } }, { projection: { expires_at: 1 } }).toArray());
    const now = this.now();
    return new Map(docs.map((doc) => [doc._id, doc.expires_at.getTime() > now ? 'live' : 'ended']));
  }

  /** Moves the idle deadline: the session was used now. */
  async touch(id: string): Promise<void> {
    const now = this.now();
    await reaching(() => this.sessions.updateOne({ _id: id }, { $set: { last_seen: new Date(now), expires_at: new Date(now + this.idleMs) } }));
  }

  /** Ends a session for every process (the client's DELETE). */
  async end(id: string): Promise<void> {
    await reaching(() => this.sessions.deleteOne({ _id: id }));
  }

  /** Removes sessions past their deadline; any process may run it, as often as it likes. */
  async sweep(): Promise<number> {
    const { deletedCount } = await reaching(() => this.sessions.deleteMany({ expires_at: { $lte: new Date(this.now()) } }));
    return deletedCount;
  }
}
