/**
 * `npx tsx bench/webhooks.ts`: how fast a run's end reaches a webhook receiver. It starts its own stack
 * (like the test suite) and a local https receiver that answers at once, then:
 * - latency: 100 events, one at a time, each recorded as a run's end and handed to its delivery
 *   workflow (what a Batch run does when it ends); p50/p99 from the hand-over to the receiver's arrival,
 *   against a direct signed POST from this process to the same receiver (the floor);
 * - throughput: 300 events handed over at once; deliveries per second the worker sustains;
 * - Batch runs end to end: 100 one-task jobs with a webhook, one at a time; p50/p99 from the run's
 *   recorded end (`ended_at`) to the receiver's arrival.
 * Options: --events N (default 100), --burst N (default 300), --runs N (default 100).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { loadConfig as configFrom } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { connectTemporal } from '../base/temporal';
import { startDelivery, webhookRetry } from '../core/webhooks/deliveries';
import { createWebhookEvents } from '../core/webhooks/events';
import { FIXTURE_TLS_CERT } from '../test/fixtures/tls-site';
import { startWebhookReceiver } from '../test/fixtures/webhook-receiver';
import { startFixtureServer } from '../test/helpers/fixtures';
import { startBenchStack } from './crawl';

const { values } = parseArgs({ options: { events: { type: 'string', default: '100' }, burst: { type: 'string', default: '300' }, runs: { type: 'string', default: '100' } } });
const EVENTS = Number(values.events);
const BURST = Number(values.burst);
const RUNS = Number(values.runs);

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (value: number): string => `${value.toFixed(1)} ms`;

async function main(): Promise<void> {
  const caFile = path.join(os.tmpdir(), `webhook-bench-ca-${process.pid}.pem`);
  writeFileSync(caFile, FIXTURE_TLS_CERT);
  const bench = await startBenchStack({ WEBHOOK_CA_FILE: caFile, LOG_LEVEL: 'warn' });
  const receiver = await startWebhookReceiver();
  const config = configFrom(bench.stack.component('api').spec.env);
  const db = await openDatabase(config, createLogger('error'), { indexes: SERVICE_INDEXES });
  const temporal = connectTemporal(config);
  const events = createWebhookEvents(db.db);
  const retry = webhookRetry(config);
  const arrivals = new Map<string, number>();
  const arrived = (eventId: string) =>
    new Promise<number>((resolve) => {
      const poll = () => {
        const index = receiver.deliveries.findIndex((delivery) => delivery.headers['x-service-event-id'] === eventId);
        if (index >= 0) resolve(arrivals.get(eventId) ?? performance.now());
        else setTimeout(poll, 2);
      };
      poll();
    });
  let sequence = 0;
  const handOver = async (jobId: string) => {
    sequence += 1;
    const event = await events.recordRunEnd({
      accountId: 'bench',
      jobId,
      runId: `run_${sequence}`,
      runSequence: sequence,
      eventType: 'run.completed',
      stats: { total: 1, completed: 1, successful: 1, failed: 0, spend: { credits: 1, cost: 0 } },
      webhook: { url: receiver.url(), signature: false },
    });
    await startDelivery(temporal.client, config.temporalTaskQueue, { key: event._id, eventId: event.event_id }, retry);
    return event.event_id;
  };

  try {
    // Direct: this process posts to the receiver itself, the floor any delivery pays.
    const agent = new Agent({ connect: { ca: [FIXTURE_TLS_CERT] } });
    const direct: number[] = [];
    for (let index = 0; index < EVENTS; index++) {
      const started = performance.now();
      const answer = await request(receiver.url(), { method: 'POST', dispatcher: agent, body: '{}', headers: { 'content-type': 'application/json' } });
      await answer.body.dump();
      direct.push(performance.now() - started);
    }
    await agent.close();

    const latencies: number[] = [];
    for (let index = 0; index < EVENTS; index++) {
      const started = performance.now();
      const eventId = await handOver('job_latency');
      latencies.push((await arrived(eventId)) - started);
    }
    latencies.sort((a, b) => a - b);
    direct.sort((a, b) => a - b);

    const before = receiver.deliveries.length;
    const burstStarted = performance.now();
    const ids = await Promise.all(Array.from({ length: BURST }, () => handOver('job_burst')));
    await Promise.all(ids.map((id) => arrived(id)));
    const burstSeconds = (performance.now() - burstStarted) / 1000;

    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(`events: ${EVENTS} one at a time, then ${BURST} at once (receiver answers 200 at once)`);
    console.log(`run end → receiver: p50 ${ms(p50)}, p99 ${ms(p99)} (goal p50 < 1000 ms)`);
    console.log(`direct POST:        p50 ${ms(percentile(direct, 50))}, p99 ${ms(percentile(direct, 99))}`);
    console.log(`ratio p50 delivery/direct: ${(p50 / percentile(direct, 50)).toFixed(1)}`);
    console.log(`burst: ${receiver.deliveries.length - before} deliveries in ${burstSeconds.toFixed(2)} s = ${(BURST / burstSeconds).toFixed(1)} deliveries/s`);

    // Batch runs end to end: the run's end as the run records it, to the receiver's arrival.
    const site = await startFixtureServer((_req, res) => {
      res.end('<html><body>page</body></html>');
    });
    const runs = db.db.collection<{ _id: string; ended_at: Date | null }>('batch_runs');
    const fromEnd: number[] = [];
    try {
      for (let index = 0; index < RUNS; index++) {
        const created = await fetch(`${bench.api}/v1/jobs`, {
          method: 'POST',
          headers: { 'X-API-Key': bench.key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ tasks: [{ url: `${site.url}p/${index}` }], webhook: { url: receiver.url(`/run-${index}`), signature: false } }),
        });
        const job = (await created.json()) as { job_id: string; latest_run: { run_id: string } };
        if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(job)}`);
        const arrivedAt = await new Promise<number>((resolve) => {
          const poll = () => (receiver.deliveries.some((delivery) => delivery.path === `/run-${index}`) ? resolve(Date.now()) : setTimeout(poll, 2));
          poll();
        });
        const ended = (await runs.findOne({ _id: job.latest_run.run_id }))?.ended_at;
        if (!ended) throw new Error(`run ${job.latest_run.run_id} has no end`);
        fromEnd.push(arrivedAt - ended.getTime());
      }
    } finally {
      await site.close();
    }
    fromEnd.sort((a, b) => a - b);
    console.log(`Batch runs (${RUNS}, one task each): run's recorded end → receiver p50 ${ms(percentile(fromEnd, 50))}, p99 ${ms(percentile(fromEnd, 99))} (goal p50 < 1000 ms)`);
  } finally {
    await temporal.close();
    await db.close();
    await receiver.close();
    await bench.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
