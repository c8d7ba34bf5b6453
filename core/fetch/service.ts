/**
 * The fetch engine of a process with the domain's stores handed in: the host gate and the mode=auto
 * memory on the database. Each process's composition root builds one and closes it last.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../base/config';
import type { Logger } from '../../base/log';
import { createFetchService, type FetchService } from '../../engine';
import { MongoHostGateStore } from '../politeness/store';
import { MongoDomainRungStore } from './rung-store';

export function createFetching(options: { config: Config; log: Logger; db: Db }): FetchService {
  const { config, log, db } = options;
  return createFetchService({ config, log, stores: { gate: new MongoHostGateStore(db), rungs: new MongoDomainRungStore(db) } });
}
