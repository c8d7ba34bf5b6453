/**
 * A run's results and a task's history in the shapes the official clients parse (`TaskResult`,
 * `TaskHistoryResponse`): each failure a problem document, each spend in credits and in the account's
 * money, and a successful task's body behind a capability link.
 */
import { ERROR_CATALOGUE } from '../../base/errors';
import type { ResultEntry, TaskResult, TaskStatus } from '../../core/batch/commands';

/** What results are presented with: the error pages' address and the link to a task's body. */
export interface Presenter {
  docsUrl: string;
  /** A capability URL for the body of task `taskId` of run `runId`. */
  resultUrl(jobId: string, runId: string, taskId: string): string;
}

export interface ResultRow {
  task_id: string;
  external_id?: string;
  run_id: string;
  url: string;
  metadata?: Record<string, string>;
  method: 'GET';
  /** `expired`: successful, but past the run's retention window (no `result_url`, its body is 410). */
  status: TaskStatus | 'expired';
  type?: string;
  result_url?: string;
  error?: Record<string, unknown>;
  source_run_id?: string;
  change_status?: 'new' | 'same' | 'changed';
  spend: { total: { credits: number; cost: number }; last_attempt: { credits: number; cost: number } };
  created_at: string;
  updated_at: string;
}

const costOf = (credits: number, perCredit: number): number => Math.round(credits * perCredit * 1e6) / 1e6;

export function problemOf(docsUrl: string, error: { code: string; status: number; detail: string }): Record<string, unknown> {
  const entry = (ERROR_CATALOGUE as Record<string, { title: string } | undefined>)[error.code];
  return {
    type: `${docsUrl}/api-error-codes#${error.code}`,
    title: `${entry?.title ?? 'Task failed'} (${error.code})`,
    status: error.status,
    code: error.code,
    detail: error.detail,
  };
}

export function presentResult(presenter: Presenter, page: { jobId: string; runId: string; perCredit: number }, entry: ResultEntry): ResultRow {
  const { task, item, status } = entry;
  const credits = item?.credits ?? 0;
  const last = item?.attempts.at(-1)?.credits ?? 0;
  return {
    task_id: entry.taskId,
    ...(task?.externalId ? { external_id: task.externalId } : {}),
    run_id: page.runId,
    url: task?.url ?? '',
    ...(task?.metadata ? { metadata: task.metadata } : {}),
    method: 'GET',
    status,
    ...(status === 'successful' && item?.type ? { type: item.type, result_url: presenter.resultUrl(page.jobId, page.runId, entry.taskId) } : {}),
    ...(status === 'failed' && item?.error ? { error: problemOf(presenter.docsUrl, item.error) } : {}),
    ...(item?.sourceRunId ? { source_run_id: item.sourceRunId } : {}),
    ...(status === 'successful' && item?.change ? { change_status: item.change } : {}),
    spend: { total: { credits, cost: costOf(credits, page.perCredit) }, last_attempt: { credits: last, cost: costOf(last, page.perCredit) } },
    created_at: entry.createdAt.toISOString(),
    updated_at: entry.updatedAt.toISOString(),
  };
}

/** Every attempt of a task: its times, outcome and spend. */
export function presentHistory(docsUrl: string, item: TaskResult | undefined, perCredit: number) {
  return {
    events: (item?.attempts ?? []).map((attempt, index) => ({
      started_at: new Date(attempt.startedAt).toISOString(),
      ended_at: new Date(attempt.endedAt).toISOString(),
      attempt: index + 1,
      ...(attempt.errorCode
        ? { error: problemOf(docsUrl, { code: attempt.errorCode, status: ERROR_CATALOGUE[attempt.errorCode as keyof typeof ERROR_CATALOGUE]?.status ?? 502, detail: attempt.errorCode === item?.error?.code ? (item?.error?.detail ?? '') : 'The attempt failed.' }) }
        : {}),
      spend: { credits: attempt.credits, cost: costOf(attempt.credits, perCredit) },
    })),
  };
}
