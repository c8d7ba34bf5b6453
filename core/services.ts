/**
 * The domain's services as one process builds them, once: the composition root of the API process
 * (api/main.ts) and of the MCP server over stdio (api/mcp/stdio.ts) calls `createServices` and hands
 * the result down; route modules and MCP tools take what they need from it and build nothing.
 */
import type { Config } from '../base/config';
import type { Database } from '../base/db';
import type { Logger } from '../base/log';
import type { TemporalHandle } from '../base/temporal';
import { checkWebhookUrl, type FetchService } from '../engine';
import type { Accounts } from './accounts';
import { createClaims } from './accounts/claims';
import { createBatchCommands } from './batch/commands';
import { createCrawlCommands } from './crawls/commands';
import { createExtractCommands } from './extract/commands';
import { fetchRecipes } from './extract/recipes';
import { createDocumentCommands } from './documents/commands';
import { createDocuments } from './documents/pool';
import { createFetchPipeline } from './fetch/pipeline';
import { createRenderRules } from './fetch/render-rules';
import { createPageRules } from './fetch/page-rules';
import { createChangeTracking } from './changes';
import { mcpSessionCommands } from './mcp/commands';
import { createMonitorCommands } from './monitors/commands';
import { monitorStore } from './monitors/store';
import { createOAuthCommands } from './oauth/commands';
import { hostsInBackoff } from './politeness/paused';
import { createWebhookSender } from './webhooks/deliver';
import { hmacKeysOf } from './webhooks/hmac-keys';

/** What the composition root has opened before the services: the connections, accounts and the fetch engine. */
export interface ServiceRoots {
  config: Config;
  log: Logger;
  db: Database;
  temporal: TemporalHandle;
  accounts: Accounts;
  fetching: FetchService;
}

/** How long an MCP session lives without a request. */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

export function createServices(roots: ServiceRoots) {
  const { config, log, db, temporal, accounts, fetching } = roots;
  const { guard } = fetching;
  const hmacKeys = hmacKeysOf(db.db, config.secretsKey);
  const extract = createExtractCommands({ db, temporal, taskQueue: config.temporalTaskQueue });
  const recipes = fetchRecipes(db.db, extract);
  const changes = createChangeTracking(db.db, fetching.html);
  // Worker threads converting documents for Fetch, MCP and uploads (core/documents).
  const documents = createDocuments(config, log);
  // The policy first, then the name's addresses; a name that does not resolve now may later, so only a refused address refuses.
  const checkTarget = async (url: URL): Promise<{ ok: true } | { ok: false; reason: string }> => {
    const policy = guard.checkUrl(url);
    if (!policy.ok) return { ok: false, reason: policy.reason };
    const resolution = await guard.resolve(url.hostname);
    if (!resolution.ok && resolution.kind === 'target_forbidden') return { ok: false, reason: resolution.reason };
    return { ok: true };
  };
  return {
    extract,
    /** The Fetch pipeline with the Extract recipes and their re-preparation on staleness, the accounts' render terms and capped-page allowance, the HTML outputs and the document pool. */
    pipeline: createFetchPipeline({
      retrieval: fetching.retrieval,
      recipes,
      html: fetching.html,
      renders: createRenderRules({ db: db.db, accounts, config, log }),
      pages: createPageRules({ db: db.db, accounts, config, log }),
      documents,
    }),
    /** Change tracking: Fetch's track_changes and as_of, /v1/history (core/changes). */
    changes: { ...changes, recipes, accounts, outputs: fetching.html },
    /** Files the caller sends (POST /v1/documents, the MCP `convert_document` tool). */
    documents: createDocumentCommands({ pool: documents, accounts, maxBytes: config.documentMaxBytes }),
    crawls: createCrawlCommands({ db: db.db, accounts, temporal, log, config, checkTarget, hmacKeys, checkWebhookUrl: (url) => checkWebhookUrl(guard, url) }),
    /** `/v1/monitors` (core/monitors). */
    monitors: createMonitorCommands({ store: monitorStore(db.db), accounts, temporal, config, checkTarget, hmacKeys, checkWebhookUrl: (url) => checkWebhookUrl(guard, url) }),
    batch: createBatchCommands({ db: db.db, accounts, temporal, config, hmacKeys, checkWebhookUrl: (url) => checkWebhookUrl(guard, url) }),
    /** The account's HMAC keys; undefined when the server has no SECRETS_KEY. */
    hmacKeys,
    webhookSender: createWebhookSender({ keys: hmacKeys, config, guard }),
    oauth: createOAuthCommands({ db: db.db, accounts, accessTtlSeconds: config.oauthAccessTokenTtlSeconds }),
    mcpSessions: mcpSessionCommands(db.db, MCP_SESSION_IDLE_MS, accounts.holdings),
    claims: createClaims(accounts),
    /** Hosts paused now after 429/503 answers (operators' metrics). */
    pausedHosts: (now: Date) => hostsInBackoff(db.db, now),
    /** Ends what the services hold of their own (the document workers): after requests drained, before the connections close. */
    close: () => documents.close(),
  };
}

export type Services = ReturnType<typeof createServices>;
