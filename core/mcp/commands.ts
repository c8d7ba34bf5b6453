/**
 * What the MCP HTTP transport (api/mcp/http.ts) asks of the session records: resume a session, open
 * one within the plan's `mcp_sessions`, keep it alive, end it, sweep the expired. The API calls these;
 * only this module and the store (sessions.ts) touch the records.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Principal } from '../accounts';
import type { LimitGate } from '../accounts/limit-gate';
import { ApiError } from '../../base/errors';
import { McpSessions, type McpInitialize, type McpSession } from './sessions';

export { McpStoreUnavailable, type McpInitialize, type McpSession } from './sessions';

export type McpResume = { ok: true; session: McpSession } | { ok: false; ended: boolean };
export type McpOpen = { ok: true; id: string } | { ok: false; refusal: ApiError };

export function mcpSessionCommands(db: Db, idleMs: number, holdings: LimitGate, now: () => number = Date.now) {
  const store = new McpSessions(db, idleMs, now);
  return {
    /**
     * The principal's live session `id`. Not found: `ended` says it never existed, was ended or expired
     * (whatever a process holds of it goes too); a session of another account is not found either.
     */
    async resume(principal: Principal, id: string): Promise<McpResume> {
      const session = await store.find(id);
      if (!session) return { ok: false, ended: true };
      return session.accountId === principal.accountId ? { ok: true, session } : { ok: false, ended: false };
    },

    /**
     * Opens a session for the principal (stored before it is answered), unless its plan's sessions are
     * all open. Each session holds one of the account's `mcp_sessions` slots (limit-gate.ts), so
     * concurrent initializes in any number of processes cannot all take the last place. The slots are
     * the count: no query over the account's sessions (on FerretDB it would read every account's). A
     * refusal is answered from memory for a moment.
     */
    async open(principal: Principal, initialize: McpInitialize): Promise<McpOpen> {
      const id = randomUUID();
      try {
        await holdings.admit(principal, 'mcpSessions', { id, states: (ids) => store.states(ids) }, () =>
          store.open({ id, accountId: principal.accountId, keyId: principal.keyId, initialize }),
        );
      } catch (error) {
        if (error instanceof ApiError && error.code === 'quota_exceeded') return { ok: false, refusal: error };
        throw error;
      }
      return { ok: true, id };
    },

    /** Moves the session's idle deadline: it was used now. */
    touch: (id: string): Promise<void> => store.touch(id),
    /** Ends the principal's session for every process, and gives its slot back. */
    async end(principal: Principal, id: string): Promise<void> {
      await store.end(id);
      await holdings.release(principal, 'mcpSessions', id);
    },
    /** Removes sessions past their deadline (their slots are taken back when their accounts are full). */
    sweep: (): Promise<number> => store.sweep(),
  };
}

export type McpSessionCommands = ReturnType<typeof mcpSessionCommands>;
