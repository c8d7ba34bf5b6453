import type { Db } from 'mongodb';
import type { Config } from '../core/config';
import type { Logger } from '../core/log';

/** Dependencies every activity receives once per worker, from `createActivities`. */
export interface ActivityDeps {
  config: Config;
  db: Db;
  log: Logger;
  /** The worker's identity, recorded where an activity leaves a trace. */
  identity: string;
}
