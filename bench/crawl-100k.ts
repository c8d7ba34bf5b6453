/**
 * `npx tsx bench/crawl-100k.ts`: one crawl of a local 100,000-page site through the service (its own
 * stack on free ports, like bench/crawl.ts). Prints the wall time, pages per second, the worker's peak
 * memory (VmHWM), the number of workflow runs (continue-as-new) and the longest run history in events.
 * Bounded: the crawl is stopped after --timeout-min minutes (default 90). Options: --pages N.
 * `--crawls N` runs N crawls of the site one after the other in the same installation and prints the
 * last one's pages per second against the first's, on an empty store (goal ≥ 0.9): whether the local
 * store slows down with what it already holds.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../base/config';
import { crawlWorkflowId } from '../core/jobs/workflow-names';
import { connectTemporal } from '../base/temporal';
import { startCrawlSite } from '../test/fixtures/crawl-site/server';
import { crawlThroughService, peakRssMiB, startBenchStack } from './crawl';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pages: { type: 'string' }, 'timeout-min': { type: 'string' }, crawls: { type: 'string' } } });
  const crawls = Math.min(10, Math.max(1, Number(values.crawls ?? 1) || 1));
  const pages = Math.min(200_000, Math.max(1_000, Number(values.pages ?? 100_000) || 100_000));
  const timeoutMin = Math.min(240, Math.max(1, Number(values['timeout-min'] ?? 90) || 90));
  const site = await startCrawlSite({ pages, fanout: 3, padding: 500, quiet: true, name: 'big' });
  const bench = await startBenchStack();
  const temporal = connectTemporal(loadConfig(bench.stack.component('api').spec.env));
  try {
    process.stdout.write(`site: ${pages} pages; ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}\n`);
    const rates: number[] = [];
    for (let earlier = 1; earlier < crawls; earlier++) {
      const before = await crawlThroughService(bench, { url: site.url, max_items: 100_000, max_pages: 100_000 }, timeoutMin * 60_000);
      rates.push(before.crawl.coverage.pages_fetched / before.seconds);
      process.stdout.write(`crawl ${earlier} of ${crawls}: ${before.crawl.coverage.pages_fetched} pages in ${before.seconds.toFixed(1)} s (${rates[rates.length - 1]!.toFixed(1)} pages/s)\n`);
    }
    const run = await crawlThroughService(bench, { url: site.url, max_items: 100_000, max_pages: 100_000 }, timeoutMin * 60_000);
    rates.push(run.crawl.coverage.pages_fetched / run.seconds);
    const { coverage } = run.crawl;
    process.stdout.write(
      `crawl ${run.crawlId}: status ${run.crawl.status}${run.crawl.stop_reason ? ` (${run.crawl.stop_reason})` : ''}, ` +
        `${coverage.pages_fetched} pages fetched, ${coverage.items_found} results, ${run.crawl.duplicates_removed} duplicates removed\n`,
    );
    process.stdout.write(`wall time: ${run.seconds.toFixed(1)} s (${(coverage.pages_fetched / run.seconds).toFixed(1)} pages/s)\n`);
    if (rates.length > 1) {
      process.stdout.write(`after ${rates.length - 1} earlier crawls in the same store: ${(rates[rates.length - 1]! / rates[0]!).toFixed(2)} of the first crawl's pages/s (goal ≥ 0.9)\n`);
    }
    const peak = peakRssMiB(bench.workerPid());
    process.stdout.write(`worker peak RSS: ${peak === undefined ? 'unknown' : `${peak.toFixed(0)} MiB`}\n`);
    let runs = 0;
    let longest = 0;
    for await (const execution of temporal.client.workflow.list({ query: `WorkflowId = '${crawlWorkflowId(run.crawlId)}'` })) {
      runs++;
      const history = await temporal.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      longest = Math.max(longest, history.events?.length ?? 0);
    }
    process.stdout.write(`workflow runs: ${runs}; longest history: ${longest} events\n`);
  } finally {
    await temporal.close();
    await bench.close();
    await site.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
