/** A Batch job's webhook: read, set, remove, and every delivery attempt of its runs' events. */
import { principalOf } from '../auth/authenticate';
import type { Route } from '../http/routes';
import { presentDeliveries } from '../webhooks/present-deliveries';
import type { BatchContext } from './context';
import { DELIVERIES, WEBHOOK_SETTING } from './response-schemas';
import { errors, json, PUT_WEBHOOK } from './schemas';

export function webhookRoutes(c: BatchContext): Route[] {
  const { commands, common } = c;
  return [
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'getJobWebhook',
      summary: 'The job’s webhook.',
      responses: { 200: json('`{url, signature}`', WEBHOOK_SETTING), ...errors },
      async handler(ctx, input) {
        ctx.body = await commands.webhook.get(principalOf(ctx), input.params.job_id ?? '');
      },
    },
    {
      ...common,
      method: 'PUT',
      path: '/v1/jobs/{job_id}/webhook',
      operationId: 'putJobWebhook',
      summary: 'Set or replace the job’s webhook.',
      body: PUT_WEBHOOK,
      responses: { 200: json('`{url, signature}`', WEBHOOK_SETTING), ...errors },
      async handler(ctx, input) {
        ctx.body = (await commands.webhook.set(principalOf(ctx), input.params.job_id ?? '', input.body as { url: string; signature?: boolean })).webhook;
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
        await commands.webhook.set(principalOf(ctx), input.params.job_id ?? '', null);
        ctx.status = 204;
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/jobs/{job_id}/webhook/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The webhook events of the job’s recent runs, each with every delivery attempt.',
      responses: { 200: json('`{deliveries}`', DELIVERIES), ...errors },
      async handler(ctx, input) {
        const found = await commands.webhook.deliveries(principalOf(ctx), input.params.job_id ?? '');
        ctx.body = presentDeliveries(found);
      },
    },
  ];
}
