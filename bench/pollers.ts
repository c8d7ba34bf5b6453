/**
 * How Temporal's list of a task queue's pollers (DescribeTaskQueue) follows a worker that dies: the
 * measurement behind the worker check of core/readiness.ts. Starts a private stack, prints the
 * pollers and the age of their last access every 5 s while the worker lives, SIGKILLs it, and prints
 * the same until the entry is gone (or `--seconds` after the kill).
 *
 *   npx tsx bench/pollers.ts [--alive 75] [--seconds 400]
 *
 * Seen on the dev server: a live worker's age climbs to ~60 s between long polls; a killed worker's
 * entry stays, unchanged, until 5 minutes after its last poll (283 s after the kill).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processConfig } from '../base/config';
import { connectTemporal } from '../base/temporal';
import { Stack } from '../scripts/stack/stack';
import { freePort } from '../test/helpers/ports';

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const ALIVE_SECONDS = argument('alive', 75);
const DEAD_SECONDS = argument('seconds', 400);
const STEP_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-pollers-'));
  const [api, ferretdb, temporal, temporalUi] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const stack = new Stack({ config: { ...processConfig(), dataDir }, ports: { api, ferretdb, temporal, temporalUi }, serviceEnv: { LOG_LEVEL: 'warn' } });
  await stack.start();
  const config = processConfig();
  const client = connectTemporal({ temporalAddress: stack.urls.temporal, temporalNamespace: config.temporalNamespace });
  /** `identity age=…s` of each poller of one task type (1 workflow, 2 activity). */
  const pollers = async (taskQueueType: 1 | 2): Promise<string[]> => {
    const { pollers: list } = await client.client.workflowService.describeTaskQueue({
      namespace: config.temporalNamespace,
      taskQueue: { name: config.temporalTaskQueue, kind: 1 },
      taskQueueType,
    });
    return (list ?? []).map((poller) => {
      const at = Number(poller.lastAccessTime?.seconds ?? 0) * 1000 + Math.floor(Number(poller.lastAccessTime?.nanos ?? 0) / 1e6);
      return `${poller.identity ?? '?'} age=${((Date.now() - at) / 1000).toFixed(1)}s`;
    });
  };
  const show = async (label: string, since: number): Promise<number> => {
    const [workflow, activity] = await Promise.all([pollers(1), pollers(2)]);
    console.log(`${label} +${((Date.now() - since) / 1000).toFixed(0)} s   workflow pollers: ${workflow.join('; ') || '-'}   activity pollers: ${activity.join('; ') || '-'}`);
    return workflow.length + activity.length;
  };
  try {
    const started = Date.now();
    while (Date.now() - started < ALIVE_SECONDS * 1000) {
      await show('alive', started);
      await sleep(STEP_MS);
    }
    await stack.component('worker').kill();
    const killed = Date.now();
    console.log('worker killed (SIGKILL)');
    while (Date.now() - killed < DEAD_SECONDS * 1000) {
      if ((await show('dead', killed)) === 0) {
        console.log(`no poller listed any more, ${((Date.now() - killed) / 1000).toFixed(0)} s after the kill`);
        break;
      }
      await sleep(STEP_MS);
    }
  } finally {
    await client.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
