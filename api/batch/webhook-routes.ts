/** A Batch job's webhook: read, set, remove, and every delivery attempt of its runs' events. */
import { problem } from '../../core/errors';
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import type { BatchContext } from './context';
import { errors, json, PUT_WEBHOOK } from './schemas';

export function webhookRoutes(c: BatchContext): Route[] {
  const { commands, collections, events, common, checkWebhook } = c;
  return [
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'getJobWebhook',
      summary: 'The job’s webhook.',
      responses: { 200: json('`{url, signature}`'), ...errors },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        if (!job.webhook) throw problem('not_found', `Job ${job._id} has no webhook.`);
        ctx.body = job.webhook;
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'putJobWebhook',
      summary: 'Set or replace the job’s webhook.',
      body: PUT_WEBHOOK,
      responses: { 200: json('`{url, signature}`'), ...errors },
      async handler(ctx, input) {
        const principal = principalOf(ctx);
        await commands.ownJob(principal, input.params.job_id ?? '');
        const webhook = await checkWebhook(principal, input.body as { url: string; signature: boolean });
        ctx.body = (await commands.setWebhook(principal, input.params.job_id ?? '', webhook ?? null)).webhook;
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'deleteJobWebhook',
      summary: 'Remove the job’s webhook.',
      responses: { 204: { description: 'Removed (also when none was set)' }, ...errors },
      async handler(ctx, input) {
        await commands.setWebhook(principalOf(ctx), input.params.job_id ?? '', null);
        ctx.status = 204;
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/webhook/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The webhook events of the job’s recent runs, each with every delivery attempt.',
      responses: { 200: json('`{deliveries}`'), ...errors },
      async handler(ctx, input) {
        const job = await commands.ownJob(principalOf(ctx), input.params.job_id ?? '');
        const runs = await collections.runs.find({ job_id: job._id }).sort({ run_sequence: -1 }).limit(20).toArray();
        const found = await events.forRuns(job._id, runs.map((run) => run.run_sequence));
        ctx.body = {
          deliveries: found.map((event) => ({
            event_id: event.event_id,
            run_id: event.run_id,
            event_type: (JSON.parse(event.body) as { event_type: string }).event_type,
            state: event.state,
            url: event.url,
            attempts: event.attempt_records.map((attempt) => ({
              attempt: attempt.attempt,
              at: attempt.at.toISOString(),
              elapsed_ms: attempt.elapsed_ms,
              ...(attempt.status_code !== undefined ? { status_code: attempt.status_code } : {}),
              ...(attempt.error !== undefined ? { error: attempt.error } : {}),
            })),
          })),
        };
      },
    },
  ];
}
