/**
 * Mocha global fixture: starts the real stack (FerretDB, Temporal dev server, worker, API) once per
 * run, on ports nothing else can take (port 0: see scripts/stack/stack.ts), with its own data folder,
 * and stops it after the last test. Supervision is on: a component killed from outside comes back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processConfig } from '../../base/config';
import { Stack } from '../../scripts/stack/stack';
import { FIXTURE_TLS_CERT } from '../fixtures/tls-site';
import { EXTRACT_HOSTS } from '../fixtures/extract-sites/sites';
import { CLASS_HOSTS } from '../fixtures/extract-sites/classes';
import { VARIANT_HOSTS } from '../fixtures/extract-sites/variants';
import { FIXTURE_DOMAIN, setExtractSitesAddress, setTestStack } from '../helpers/stack';

let dataDir: string | undefined;
let stack: Stack | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-test-'));
  // The launcher's settings come from the environment (MONGODB_URL / TEMPORAL_ADDRESS set: use those);
  // the services get a fixed test setup with their own database and task queue.
  const config = { ...processConfig(), dataDir };
  const runId = `${process.pid}_${Date.now().toString(36)}`;
  // Webhook receivers on loopback use the fixture certificate; only deliveries trust it.
  const webhookCa = path.join(dataDir, 'webhook-ca.pem');
  writeFileSync(webhookCa, FIXTURE_TLS_CERT);
  // The Extract sites answer on port 80 of an address of this run's own, so parallel runs never meet.
  const sitesAddress = `127.${100 + (process.pid % 100)}.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;
  setExtractSitesAddress(sitesAddress);
  const started = Date.now();
  stack = new Stack({
    config,
    ports: { api: 0, ferretdb: 0, temporal: 0, temporalUi: 0 },
    serviceEnv: {
      LOG_LEVEL: 'info',
      TARGET_ALLOWLIST: `127.0.0.1,::1,localhost,${sitesAddress}`,
      HOST_OVERRIDES: [`*.${FIXTURE_DOMAIN}=127.0.0.1`, `${FIXTURE_DOMAIN}=127.0.0.1`, ...[...EXTRACT_HOSTS, ...CLASS_HOSTS, ...VARIANT_HOSTS].map((host) => `${host}=${sitesAddress}`)].join(','),
      // Suites send keys that are not valid on purpose, all from loopback: test/hardening/random-keys.test.ts
      // checks the limit on failed key look-ups with an app of its own.
      AUTH_FAILURE_BURST: '100000',
      // Suites send many requests of one account at once on purpose: the budget of the paid plans for
      // every account (test/api/fair-share.test.ts and limits-across-processes.test.ts check budgets
      // with accounts of their own).
      ACCOUNT_LIMITS: 'mcp_sessions=20,scheduled_jobs=5,stored_inputs=20,stored_input_bytes=200mb,concurrent_exports=3,requests_per_second=200,request_burst=400,requests_in_flight=200',
      // Suites drive one fixture host hard on purpose (Batch scale, chaos): more at once than the default.
      HOST_CONCURRENCY: '64',
      // One fixture host with a budget of its own: 10 request starts a second, 4 at once (test/politeness).
      HOST_BUDGETS: `paced.${FIXTURE_DOMAIN}=10/4`,
      SHUTDOWN_TIMEOUT_MS: '5000',
      WAIT_FOR_TIMEOUT_MS: '2000',
      WEBHOOK_CA_FILE: webhookCa,
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_RETRY_INITIAL_MS: '300',
      WEBHOOK_RETRY_MAX_INTERVAL_MS: '1000',
      // Export files in many small chunks, so a test sees an export resume after some of them.
      BATCH_EXPORT_CHUNK_BYTES: '4096',
      // Scheduled jobs that fire every few seconds, so a test sees several runs.
      BATCH_SCHEDULE_MIN_INTERVAL_SECONDS: '2',
      MONITOR_MIN_INTERVAL_SECONDS: '2',
      // Opens /metrics and /readyz?deep=true to the tests (test/helpers/stack.ts operatorHeaders).
      OPERATOR_TOKEN: `operator-${runId}-${Math.random().toString(36).slice(2)}`,
      MONGODB_DATABASE: `fetchplane_test_${runId}`,
      TEMPORAL_TASK_QUEUE: `fetchplane-test-${runId}`,
    },
    report: (line) => process.stdout.write(`  [stack] ${line}\n`),
  });
  await stack.start();
  setTestStack(stack);
  process.stdout.write(`  [stack] ready in ${((Date.now() - started) / 1000).toFixed(1)} s; data and logs in ${dataDir}\n`);
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stack?.stop();
  setTestStack(undefined);
  if (dataDir && process.exitCode === undefined) rmSync(dataDir, { recursive: true, force: true });
}
