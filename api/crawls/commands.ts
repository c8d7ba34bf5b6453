/** The crawl commands as the API process wires them: its database, Temporal client and the engine's target check. */
import { createCrawlCommands, type CrawlCommands } from '../../core/crawls/commands';
import type { ApiDeps } from '../deps';

export function crawlCommandsOf(deps: ApiDeps): CrawlCommands {
  const { guard } = deps.fetching;
  return createCrawlCommands({
    db: deps.db.db,
    accounts: deps.accounts,
    temporal: deps.temporal,
    log: deps.log,
    config: deps.config,
    // The policy first, then the name's addresses; a name that does not resolve now may later, so only a refused address refuses.
    async checkTarget(url) {
      const policy = guard.checkUrl(url);
      if (!policy.ok) return { ok: false, reason: policy.reason };
      const resolution = await guard.resolve(url.hostname);
      if (!resolution.ok && resolution.kind === 'target_forbidden') return { ok: false, reason: resolution.reason };
      return { ok: true };
    },
  });
}
