import { SELF_CHECKS, type SelfCheckRecord } from '../core/selfcheck';
import type { ActivityDeps } from './deps';

const KEEP_SELF_CHECKS_MS = 24 * 60 * 60 * 1000;

export function selfCheckActivities(deps: ActivityDeps) {
  const records = deps.db.collection<SelfCheckRecord>(SELF_CHECKS);
  return {
    /** Writes the self-check record; idempotent on retry because the token is the key. */
    async recordSelfCheck(token: string): Promise<{ worker: string }> {
      await records.updateOne(
        { _id: token },
        { $setOnInsert: { created_at: new Date(), worker: deps.identity } },
        { upsert: true },
      );
      // No TTL indexes on FerretDB: old records are pruned here instead.
      await records.deleteMany({ created_at: { $lt: new Date(Date.now() - KEEP_SELF_CHECKS_MS) } });
      return { worker: deps.identity };
    },
  };
}
