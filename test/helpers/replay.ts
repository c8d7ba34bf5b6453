/**
 * Replaying workflow histories against the workflow code of this tree (the same bundle the worker
 * runs), so a change that would break a run in flight fails a test. A history is Temporal's record of
 * a run: replay runs the workflow code again and checks it issues the same commands.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { PROJECT_ROOT, processConfig } from '../../base/config';
import { createLogger } from '../../base/log';
import { workflowBundlePath } from '../../workers/bundle';

/** Histories recorded from real runs of the service and kept with the code (see the folder's README). */
export const RECORDED_HISTORIES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'histories');

export type History = temporal.api.history.v1.IHistory;

/** A history as JSON (proto field names, 64-bit numbers as strings, bytes as base64), and back. */
export const historyToText = (history: History): string =>
  JSON.stringify(temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.fromObject(history), { longs: String, enums: String, bytes: String }));
export const historyFromText = (text: string): History => temporal.api.history.v1.History.fromObject(JSON.parse(text) as Record<string, unknown>);

export function recordedHistories(): Array<{ workflowId: string; history: History }> {
  return readdirSync(RECORDED_HISTORIES)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => ({ workflowId: name.replace(/\.json$/, ''), history: historyFromText(readFileSync(path.join(RECORDED_HISTORIES, name), 'utf8')) }));
}

let quiet = false;

/** The replay worker logs each start and stop; warnings are enough here. */
function quietRuntime(): void {
  if (quiet) return;
  quiet = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // A runtime exists already in this process: it keeps its logger.
  }
}

/** Replays each history; answers the workflow ids whose replay failed, with why. */
export async function replayFailures(histories: Array<{ workflowId: string; history: History }>): Promise<Array<{ workflowId: string; error: string }>> {
  quietRuntime();
  const config = processConfig();
  const codePath = await workflowBundlePath(config.stackDir, createLogger('error'));
  const failures: Array<{ workflowId: string; error: string }> = [];
  const results = Worker.runReplayHistories({ workflowBundle: { codePath }, replayName: 'fetchplane-replay' }, histories);
  for await (const result of results) {
    if (result.error) failures.push({ workflowId: result.workflowId, error: String(result.error) });
  }
  return failures;
}
