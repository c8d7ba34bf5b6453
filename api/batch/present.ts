/**
 * Batch's jobs and runs in the shapes the official clients parse (`Job`, `Run`), and a stored body as
 * it is served. Results and task histories: present-results.ts.
 */
import { parseBoolean } from '../../base/boolean';
import { isTerminal, runStatusOf, type JobDoc, type RunView, type TaskBody } from '../../core/batch/commands';
import type { AppContext } from '../http/context';
import { SANDBOX } from './schemas';

const iso = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);

/**
 * A run in the clients' `Run` shape. While it runs, its total follows the job's tasks (an open job
 * grows before the run has counted the new tasks), and `last_batch_received` is whether the job is
 * closed.
 */
export function presentRun(view: RunView, job: Pick<JobDoc, 'status' | 'task_count'>) {
  const { run } = view;
  const status = runStatusOf(view);
  const stats = isTerminal(status) ? run.stats : { ...run.stats, total: Math.max(run.stats.total, job.task_count) };
  return {
    run_id: run._id,
    job_id: run.job_id,
    run_sequence: run.run_sequence,
    status,
    trigger: run.trigger,
    stats,
    last_batch_received: job.status !== 'open',
    pause_state: isTerminal(status) ? 'active' : (view.control?.pause_state ?? 'active'),
    ingest_status: 'done',
    created_at: iso(run.created_at),
    updated_at: iso(run.updated_at),
    ...(run.rerun_of ? { rerun_of: run.rerun_of } : {}),
    ...(run.failure_reason ? { failure_reason: run.failure_reason, failure_detail: run.failure_detail ?? '' } : {}),
    // The end event's delivery: pending while it is retried, then delivered or failed.
    ...(run.webhook_outcome ? { webhook_outcome: run.webhook_outcome } : {}),
  };
}

/** A job in the clients' `Job` shape, with its latest run; its parameters echoed as strings, the type `Job.zenrows_params` declares. */
export function presentJob(job: JobDoc, run: RunView | null) {
  return {
    job_id: job._id,
    type: job.type,
    status: job.status,
    format: formatOf(job.params),
    zenrows_params: job.params,
    ...(job.external_id ? { external_id: job.external_id } : {}),
    ...(job.name ? { name: job.name } : {}),
    ...(job.metadata ? { metadata: job.metadata } : {}),
    webhook: job.webhook,
    ...(job.type === 'scheduled'
      ? { schedule: job.schedule, schedule_state: job.schedule_state ?? 'active', next_scheduled_run: iso(job.next_scheduled_run) }
      : {}),
    task_count: job.task_count,
    latest_run: run ? presentRun(run, job) : null,
    created_at: iso(job.created_at),
    updated_at: iso(job.updated_at),
  };
}

function formatOf(params: Record<string, string>): string {
  const type = params.response_type;
  if (type === 'markdown' || type === 'plaintext' || type === 'pdf') return type;
  // Flags read as Fetch reads them (`true`, `1`, any case).
  const flag = (value: string | undefined): boolean => value !== undefined && parseBoolean(value) === true;
  if (params.extract || flag(params.json_response) || params.css_extractor || flag(params.autoparse) || params.outputs) return 'json';
  return 'html';
}

/** A stored body, sandboxed (it is the target's content, served from our origin). */
export function sendBody(ctx: AppContext, found: TaskBody): void {
  ctx.set(SANDBOX);
  ctx.set('Content-Type', found.contentType);
  ctx.body = found.body;
}
