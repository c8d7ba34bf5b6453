/**
 * The fetch engine as a process owns it: the plain transport, the browser pool, the per-domain rung
 * memory, the installation's host gate, robots.txt and the retrieval on top, and the worker threads
 * that keep large HTML outputs off the event loop. The API process and the worker each build one and
 * close it last.
 */
import type { Config } from '../base/config';
import type { Logger } from '../base/log';
import { BrowserPool, browserPoolOptionsFromConfig, renderLimitsFromConfig } from './browser';
import { createFetchEngine, type FetchEngine } from './http/engine';
import { createRungMemory, type DomainRungStore } from './escalation';
import { HostGate, type HostGateStore } from './politeness';
import { createRetrieval, type Retrieval } from './retrieve';
import { configureParseCaps } from './outputs/dom';
import { HtmlOutputs } from './outputs/run';
import { RobotsReader, ROBOTS_MAX_BYTES } from './robots';
import { WorkerPool } from './threads';
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
  /** The process's worker threads (engine/threads): HTML outputs run there, and other engine work may. */
  threads: WorkerPool;
  /** The HTML outputs under the parse caps, inline for small pages and on `threads` for the rest. */
  html: HtmlOutputs;
  close(): Promise<void>;
}

/** Where the engine keeps what outlives a request: the domain hands in its stores. */
export interface FetchStores {
  /** The installation's host gate: back-offs, Crawl-delays, start slots and leases. */
  gate: HostGateStore;
  /** mode=auto: which configuration last worked per domain. */
  rungs: DomainRungStore;
}

/** The worker threads and the HTML outputs on them, as the configuration sets them. */
export function htmlOutputsFromConfig(config: Config, log: Logger): { threads: WorkerPool; html: HtmlOutputs } {
  const threads = new WorkerPool({
    size: config.workerThreads,
    queueLimit: config.workerThreadQueue,
    timeoutMs: config.htmlTimeoutMs,
    memoryMb: config.workerThreadMemoryMb,
    log: log.child({ component: 'worker-threads' }),
  });
  const caps = { maxChars: config.htmlMaxSize, maxNodes: config.htmlMaxNodes, maxDepth: config.htmlMaxDepth };
  // The same caps for the parses that run outside the outputs (a crawl page's links, Extract's preparation).
  configureParseCaps(caps);
  const html = new HtmlOutputs({
    pool: threads,
    caps,
    inlineMaxChars: config.htmlInlineMaxSize,
    inlineMaxNodes: config.htmlInlineMaxNodes,
    timeoutMs: config.htmlTimeoutMs,
    memoryMb: config.workerThreadMemoryMb,
  });
  return { threads, html };
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
  const { threads, html } = htmlOutputsFromConfig(config, log);
  return {
    engine,
    browsers,
    retrieval,
    gate,
    robots,
    guard: engine.guard,
    threads,
    html,
    async close() {
      await threads.close();
      await browsers.close();
      await engine.close();
    },
  };
}
