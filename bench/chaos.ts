/**
 * `npx tsx bench/chaos.ts`: the chaos run at a steady mixed load (Fetch, Batch jobs with webhooks,
 * crawls) for five minutes, on a stack of its own, while each of worker, API, FerretDB and Temporal is
 * SIGKILLed once from outside at a seeded moment and only the launcher's supervision brings it back.
 * Prints what was accepted, what was lost (goal 0), double charges (goal 0), work stuck (goal 0), the
 * time back to ready after each kill (goal < 30 s) and 5xx answers other than 503 (goal 0).
 *
 * Options: --minutes N (default 5), --seed N (default random; printed), --lanes N (Fetch calls in
 * flight, default 2), --tasks N (per Batch job, default 100).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createAccounts } from '../core/accounts';
import { loadConfig, processConfig } from '../base/config';
import { openDatabase } from '../base/db';
import { SERVICE_INDEXES } from '../core/indexes';
import { createLogger } from '../base/log';
import { Stack } from '../scripts/stack/stack';
import { runChaos } from '../test/chaos/drive';
import { FIXTURE_TLS_CERT } from '../test/fixtures/tls-site';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { minutes: { type: 'string', default: '5' }, seed: { type: 'string' }, lanes: { type: 'string', default: '2' }, tasks: { type: 'string', default: '100' } },
  });
  const seed = Number(values.seed ?? Math.floor(Math.random() * 1_000_000));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-chaos-bench-'));
  const webhookCa = path.join(dataDir, 'webhook-ca.pem');
  writeFileSync(webhookCa, FIXTURE_TLS_CERT);
  const say = (line: string) => process.stdout.write(`[chaos] ${line}\n`);
  const stack = new Stack({
    config: { ...processConfig(), dataDir },
    serviceEnv: {
      LOG_LEVEL: 'warn',
      TARGET_ALLOWLIST: '127.0.0.1,::1,localhost',
      HOST_OVERRIDES: '*.fixture.test=127.0.0.1,fixture.test=127.0.0.1',
      MONGODB_DATABASE: 'fetchplane_chaos_bench',
      TEMPORAL_TASK_QUEUE: 'fetchplane-chaos-bench',
      WEBHOOK_CA_FILE: webhookCa,
      WEBHOOK_RETRY_INITIAL_MS: '500',
      WEBHOOK_RETRY_MAX_INTERVAL_MS: '5000',
    },
    report: say,
  });
  await stack.start();
  const config = loadConfig(stack.component('api').spec.env);
  const log = createLogger('error');
  const db = await openDatabase(config, log, { indexes: SERVICE_INDEXES });
  const accounts = createAccounts({ db: db.db, config, log });
  try {
    say(`seed ${seed}; ${values.minutes} minutes of traffic`);
    const report = await runChaos(
      { api: () => stack.urls.api, pid: (name) => stack.component(name).pid, accounts, db: db.db },
      { seed, durationMs: Number(values.minutes) * 60_000, fetchLanes: Number(values.lanes), jobTasks: Number(values.tasks), jobEveryMs: 10_000, crawlPages: 20, crawlEveryMs: 20_000, settleMs: 300_000, log: say },
    );
    const accepted = report.fetch.ok + report.jobs.tasks + report.crawls.pagesFetched;
    say('');
    say(`accepted:        ${report.fetch.ok} Fetch answers 200, ${report.jobs.accepted} Batch jobs (${report.jobs.tasks} tasks), ${report.crawls.accepted} crawls (${report.crawls.pagesFetched} pages); ${accepted} units of work`);
    say(`lost:            ${report.lost} (goal 0)`);
    say(`double charges:  ${report.doubleCharges} (goal 0); charged Fetch ${report.fetch.charged} (200s ${report.fetch.ok}, unanswered ${report.fetch.unanswered}), Batch ${report.jobs.charged}, crawls ${report.crawls.charged}`);
    say(`stuck:           ${report.stuck} (goal 0)`);
    for (const kill of report.kills) say(`back after kill: ${kill.component.padEnd(8)} at ${(kill.at / 1000).toFixed(1)} s -> ${kill.backAfterMs === undefined ? 'never' : `${(kill.backAfterMs / 1000).toFixed(1)} s`} (goal < 30 s)`);
    say(`5xx but 503:     ${report.fiveHundreds} (goal 0); answers by status ${JSON.stringify(report.answers)}`);
    say(`webhooks:        ${report.jobs.webhooks} runs delivered, ${report.jobs.duplicateDeliveries} repeated deliveries`);
    say(report.problems.length === 0 ? 'every check held' : `problems:\n  ${report.problems.join('\n  ')}`);
    process.exitCode = report.problems.length === 0 ? 0 : 1;
  } finally {
    await db.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
