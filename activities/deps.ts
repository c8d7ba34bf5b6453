import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Accounts } from '../core/accounts';
import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import type { TargetGuard } from '../engine';
import type { createWorkerServices } from '../core/worker-services';

/**
 * Dependencies every activity receives, built once by the worker's composition root (workers/main.ts):
 * the domain's services (core/worker-services.ts) and what the Batch activities still take directly.
 */
export interface ActivityDeps extends ReturnType<typeof createWorkerServices> {
  config: Config;
  db: Db;
  log: Logger;
  /** The worker's identity, recorded where an activity leaves a trace. */
  identity: string;
  /** Accounts, plans and charging. */
  accounts: Accounts;
  /** A Temporal client, for what activities read of Temporal itself (when a schedule fires next). */
  temporal: Client;
  /** The worker's one target guard (its fetch engine's). */
  guard: TargetGuard;
}

export type { TaskOutcome, TaskRunner } from '../core/batch/task-runner';
