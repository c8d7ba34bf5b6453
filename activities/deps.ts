import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Accounts } from '../core/accounts';
import type { BatchWorker } from '../core/batch/worker';
import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import type { RobotsReader, TargetGuard } from '../engine';
import type { WebhookSender } from '../core/webhooks/deliver';
import type { PageFetcher } from './crawl/fetcher';

/** Dependencies every activity receives once per worker, from `createActivities`. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  log: Logger;
  /** The worker's identity, recorded where an activity leaves a trace. */
  identity: string;
  /** Accounts, plans and charging (crawl pages are billed as they are fetched). */
  accounts: Accounts;
  /** How crawls open a page: the Fetch pipeline's mode=auto ladder (core/fetch/pipeline.ts), through the installation's host gate. */
  pageFetcher: PageFetcher;
  /** robots.txt per origin (Extract's discovery reads its sitemaps here). */
  robots: RobotsReader;
  /** Batch's work in this worker (core/batch/worker.ts), built once by the worker's composition root. */
  batch: BatchWorker;
  /** A Temporal client, for what activities read of Temporal itself (when a schedule fires next). */
  temporal: Client;
  /** The worker's one target guard (its fetch engine's): webhook receivers are checked with it. */
  guard: TargetGuard;
  /** The worker's one webhook sender, signing with its one HMAC key store. */
  webhookSender: WebhookSender;
}

