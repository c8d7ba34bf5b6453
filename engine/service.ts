/**
 * The fetch engine as a process owns it: the plain transport, the browser pool, the per-domain rung
 * memory, the installation's host gate, robots.txt and the retrieval on top. The API process and the
 * worker each build one and close it last.
 */
import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import { BrowserPool, browserPoolOptionsFromConfig, renderLimitsFromConfig } from './browser';
import { createFetchEngine, type FetchEngine } from './http/engine';
import { createRungMemory, type DomainRungStore } from './escalation';
import { HostGate, type HostGateStore } from './politeness';
import { createRetrieval, type Retrieval } from './retrieve';
import { RobotsReader, ROBOTS_MAX_BYTES } from './robots';
import type { TargetGuard } from './safety';
import type { HopGate } from './types';

export interface FetchService {
  engine: FetchEngine;
  browsers: BrowserPool;
  retrieval: Retrieval;
  gate: HostGate;
  robots: RobotsReader;
  /** The process's one target guard (the plain engine's): every other check of a target URL (crawl starts, webhook receivers) uses it. */
  guard: TargetGuard;
  close(): Promise<void>;
}

/** Where the engine keeps what outlives a request: the domain hands in its stores. */
export interface FetchStores {
  /** The installation's host gate: back-offs, Crawl-delays, start slots and leases. */
  gate: HostGateStore;
  /** mode=auto: which configuration last worked per domain. */
  rungs: DomainRungStore;
}

/** The host gate as the configuration sets it. */
export function hostGateFromConfig(config: Config, store: HostGateStore): HostGate {
  return new HostGate(store, {
    defaults: { rate: config.hostRate, concurrency: config.hostConcurrency },
    named: config.hostBudgets,
    backoffMaxMs: config.hostBackoffMaxMs,
  });
}

export function createFetchService(options: { config: Config; log: Logger; stores: FetchStores }): FetchService {
  const { config, log, stores } = options;
  const engine = createFetchEngine({ config, log });
  const browsers = new BrowserPool(browserPoolOptionsFromConfig(config, log.child({ component: 'browser-pool' })));
  const memory = createRungMemory(stores.rungs, { ttlMs: config.autoModeMemoryMinutes * 60_000 });
  const gate = hostGateFromConfig(config, stores.gate);
  const cacheMs = config.robotsCacheMinutes * 60_000;
  const robots = new RobotsReader({
    userAgent: config.robotsUserAgent,
    cacheMs,
    errorMs: config.robotsErrorMinutes * 60_000,
    // robots.txt is a request to the host like any other: each of its hops takes its turn at the gate.
    async fetchText(url) {
      const hops: HopGate = {
        async enter(hop) {
          try {
            return { ok: true, ...(await gate.enter(hop, { account: '' })) };
          } catch {
            return { ok: true, done: () => undefined };
          }
        },
      };
      const result = await engine.fetch({ url, hops });
      if (!result.ok) return { ok: false, detail: result.error.detail };
      return { ok: true, status: result.status, body: result.body.subarray(0, ROBOTS_MAX_BYTES).toString('utf8') };
    },
  });
  const retrieval = createRetrieval({ engine, browsers, memory, log, renderLimits: renderLimitsFromConfig(config), gate, robots: { reader: robots, cacheMs } });
  return {
    engine,
    browsers,
    retrieval,
    gate,
    robots,
    guard: engine.guard,
    async close() {
      await browsers.close();
      await engine.close();
    },
  };
}
