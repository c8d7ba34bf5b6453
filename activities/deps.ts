import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import type { createWorkerServices } from '../core/worker-services';

/**
 * Dependencies every activity receives, built once by the worker's composition root (workers/main.ts):
 * the domain's services (core/worker-services.ts), each a command or step of core/ the activities call.
 */
export interface ActivityDeps extends ReturnType<typeof createWorkerServices> {
  config: Config;
  log: Logger;
  /** The worker's identity, recorded where an activity leaves a trace. */
  identity: string;
}
