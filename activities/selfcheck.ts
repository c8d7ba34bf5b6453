import type { ActivityDeps } from './deps';

export function selfCheckActivities(deps: ActivityDeps) {
  return {
    /** Writes the self-check record (core/selfcheck.ts); idempotent on retry because the token is the key. */
    async recordSelfCheck(token: string): Promise<{ worker: string }> {
      return deps.selfCheck(token);
    },
  };
}
