/**
 * The fetch engine as a process owns it: the plain transport, the browser pool, the per-domain rung
 * memory and the retrieval on top. The API process and the worker each build one and close it last.
 */
import type { Db } from 'mongodb';
import type { Config } from '../core/config';
import type { Logger } from '../core/log';
import { BrowserPool, browserPoolOptionsFromConfig, renderLimitsFromConfig } from './browser';
import { createFetchEngine, type FetchEngine } from './http/engine';
import { createRungMemory, MongoDomainRungStore } from './escalation';
import { createRetrieval, type Retrieval } from './retrieve';
import type { TargetGuard } from './safety';

export interface FetchService {
  engine: FetchEngine;
  browsers: BrowserPool;
  retrieval: Retrieval;
  /** The process's one target guard (the plain engine's): every other check of a target URL (crawl starts, webhook receivers) uses it. */
  guard: TargetGuard;
  close(): Promise<void>;
}

export function createFetchService(options: { config: Config; log: Logger; db: Db }): FetchService {
  const { config, log, db } = options;
  const engine = createFetchEngine({ config, log });
  const browsers = new BrowserPool(browserPoolOptionsFromConfig(config, log.child({ component: 'browser-pool' })));
  const memory = createRungMemory(new MongoDomainRungStore(db), { ttlMs: config.autoModeMemoryMinutes * 60_000 });
  const retrieval = createRetrieval({ engine, browsers, memory, log, renderLimits: renderLimitsFromConfig(config) });
  return {
    engine,
    browsers,
    retrieval,
    guard: engine.guard,
    async close() {
      await browsers.close();
      await engine.close();
    },
  };
}
