/**
 * The domain's services as the worker builds them, once, in its composition root (workers/main.ts),
 * for its activities: Batch tasks, crawl pages and monitors' pages go through the same Fetch pipeline
 * as the Fetch route, with Extract's recipes (a Batch task may take `extract`, a monitor compares it;
 * a stale recipe asks for its re-preparation as the API does); crawls and Extract's preparation share one crawl machinery (the
 * host gate is the installation's).
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import type { FetchService } from '../engine';
import type { Accounts } from './accounts';
import { createBatchWorker } from './batch/worker';
import { createCrawlWork, autoPageFetcher, crawlAnnouncer } from './crawls/work';
import { preparationSteps } from './extract/prepare/steps';
import { fetchRecipes } from './extract/recipes';
import { requestRefresh } from './extract/refresh';
import { createFetchPipeline } from './fetch/pipeline';
import { createRenderRules } from './fetch/render-rules';
import { createDocuments } from './documents/pool';
import { createTaskRunner } from './fetch/task';
import { createMonitorWork } from './monitors/worker';
import { ChangeRecorder, taskChanges } from './changes';
import type { WorkContext } from './jobs/work';
import { reconcile } from './reconcile';
import { sweep } from './retention';
import { recordSelfCheck } from './selfcheck';
import { createWebhookSender } from './webhooks/deliver';
import { webhookDelivery } from './webhooks/delivery';
import { webhookRetry } from './webhooks/deliveries';
import { hmacKeysOf } from './webhooks/hmac-keys';

export interface WorkerRoots {
  config: Config;
  log: Logger;
  db: Db;
  temporal: Client;
  accounts: Accounts;
  fetching: FetchService;
  /** The worker's identity, recorded where its work leaves a trace. */
  identity: string;
  /** The activity running now, as its step sees it (activities/failures.ts `workContext`). */
  current: () => WorkContext;
}

export function createWorkerServices(roots: WorkerRoots) {
  const { config, log, db, temporal, accounts, fetching, identity } = roots;
  // Worker threads converting the documents of Batch tasks and crawl pages (core/documents).
  const documents = createDocuments(config, log);
  const recipes = fetchRecipes(db, { requestRefresh: (domain) => requestRefresh({ db, client: temporal, taskQueue: config.temporalTaskQueue }, domain) });
  const pipeline = createFetchPipeline({ retrieval: fetching.retrieval, recipes, html: fetching.html, renders: createRenderRules({ db, accounts, config, log }), documents });
  const recorder = new ChangeRecorder(db, fetching.html);
  const crawl = createCrawlWork({
    db,
    accounts,
    html: fetching.html,
    fetcher: autoPageFetcher(pipeline),
    retryAfterMaxMs: config.crawlRetryAfterMaxMs,
    documents,
    announcer: crawlAnnouncer({ db, client: temporal, taskQueue: config.temporalTaskQueue, retry: webhookRetry(config) }),
  });
  return {
    batch: createBatchWorker({ db, accounts, temporal, config, runTask: createTaskRunner(pipeline, taskChanges(recorder, fetching.html)) }),
    /** Monitors' checks: their pages through the same pipeline (Extract's recipes included), recorded by change tracking. */
    monitors: createMonitorWork({ db, accounts, pipeline, recorder, outputs: fetching.html, recipes }),
    crawl,
    preparation: preparationSteps({ db, robots: fetching.robots, runtime: crawl.runtime, current: roots.current, seed: config.extractSampleSeed }),
    webhooks: webhookDelivery({ db, sender: createWebhookSender({ keys: hmacKeysOf(db, config.secretsKey), config, guard: fetching.guard }) }),
    /** One retention sweep (core/retention.ts); `progress` is called as it goes. */
    sweep: (progress: () => void) => sweep(db, config, new Date(), progress),
    /** One reconciler pass over starts cut short (core/reconcile.ts). */
    reconcile: (progress: () => void) => reconcile({ db, client: temporal, config, accounts, log }, { progress }),
    /** The pipeline self-check's record, written by this worker. */
    selfCheck: (token: string) => recordSelfCheck(db, token, identity),
    /** Ends the document workers, once the activities have drained. */
    close: () => documents.close(),
  };
}
