/**
 * The service's real workflow code on the test stack's Temporal dev server, with activities the test
 * writes: a worker in the test process on a task queue of its own (and its light queue), so a test
 * drives a workflow through branches the real activities reach only rarely (a refused fire, a delivery
 * that never lands) and reads what the workflow asked of its activities. The histories it leaves are
 * Temporal's records of real workflow code and replay as any other.
 */
import { randomUUID } from 'node:crypto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import type { Activities } from '../../activities';
import { createLogger } from '../../base/log';
import { lightTaskQueue } from '../../core/jobs/workflow-names';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { workflowBundlePath } from '../../workers/bundle';
import { serviceConfig } from './app';

/** One mocked activity's calls, in order: the argument lists. */
export type Calls = Record<string, unknown[][]>;

export interface MockedWorker {
  client: Client;
  taskQueue: string;
  calls: Calls;
  close(): Promise<void>;
}

export async function startMockedWorker(mocks: Partial<{ [K in keyof Activities]: (...args: any[]) => Promise<unknown> }>): Promise<MockedWorker> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const config = serviceConfig();
  const taskQueue = `mocked-${randomUUID()}`;
  const calls: Calls = {};
  const activities = Object.fromEntries(
    Object.entries(mocks).map(([name, mock]) => [
      name,
      (...args: unknown[]) => {
        (calls[name] ??= []).push(args);
        return (mock as (...args: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  );
  try {
    // The activities' failures the tests provoke are warnings: errors are enough here.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // A runtime exists already in this process: it keeps its logger.
  }
  const codePath = await workflowBundlePath(config.stackDir, createLogger('error'));
  const connection = await NativeConnection.connect({ address: config.temporalAddress as string });
  const worker = await Worker.create({ connection, namespace: config.temporalNamespace, taskQueue, workflowBundle: { codePath }, activities });
  const light = await Worker.create({ connection, namespace: config.temporalNamespace, taskQueue: lightTaskQueue(taskQueue), activities });
  const running = Promise.all([worker.run(), light.run()]);
  const temporal: TemporalHandle = connectTemporal(config);
  return {
    client: temporal.client,
    taskQueue,
    calls,
    async close() {
      worker.shutdown();
      light.shutdown();
      await running;
      await connection.close();
      await temporal.close();
    },
  };
}

/** A promise the test settles when it chooses: holds a mocked activity until then. */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Polls `check` until it answers true (bounded: fails after `timeoutMs`). */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
