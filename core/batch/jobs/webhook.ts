/** A job's webhook: checked (public https URL; signing needs an active HMAC key), set, removed, and its deliveries read. */
import type { Principal } from '../../accounts';
import { problem } from '../../../base/errors';
import { createWebhookEvents } from '../../webhooks/events';
import type { CommandContext } from '../context';
import type { JobDoc, WebhookSetting } from '../store';

/** Runs whose deliveries a job's listing shows, newest first. */
const DELIVERY_RUNS = 20;

export function webhookCommands(c: CommandContext) {
  const { deps, store } = c;
  const events = createWebhookEvents(store.db);

  const check = async (principal: Principal, webhook: { url: string; signature?: boolean } | undefined): Promise<WebhookSetting | undefined> => {
    if (!webhook) return undefined;
    if (!deps.checkWebhookUrl) throw problem('internal', 'Webhook URLs cannot be checked here.');
    const target = await deps.checkWebhookUrl(webhook.url);
    if (!target.ok) throw problem(target.code, target.detail);
    const signature = webhook.signature === true;
    if (signature) {
      if (!deps.hmacKeys) throw problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.');
      const key = await deps.hmacKeys.signingKey(principal.accountId);
      if (!key) throw problem('webhook_signing_requires_active_key', 'Signed webhooks need an active HMAC key: call POST /v1/hmac/keys/rotate first.');
    }
    return { url: target.url.href, signature };
  };

  return {
    check,

    /** The job's webhook, or 404 when it has none. */
    async get(principal: Principal, jobId: string): Promise<WebhookSetting> {
      const job = await c.ownJob(principal, jobId);
      if (!job.webhook) throw problem('not_found', `Job ${job._id} has no webhook.`);
      return job.webhook;
    },

    /** Sets (checked) or removes (null) the job's webhook. */
    async set(principal: Principal, jobId: string, webhook: { url: string; signature?: boolean } | null): Promise<JobDoc> {
      await c.ownJob(principal, jobId);
      const setting = webhook ? ((await check(principal, webhook)) ?? null) : null;
      await store.jobs.updateOne({ _id: jobId }, { $set: { webhook: setting, updated_at: new Date() } });
      return c.ownJob(principal, jobId);
    },

    /** The webhook events of the job's recent runs, each with every delivery attempt. */
    async deliveries(principal: Principal, jobId: string) {
      const job = await c.ownJob(principal, jobId);
      const runs = await store.runs.find({ job_id: job._id }).sort({ run_sequence: -1 }).limit(DELIVERY_RUNS).toArray();
      return events.forRuns(job._id, runs.map((run) => run.run_sequence));
    },
  };
}

export type WebhookCommands = ReturnType<typeof webhookCommands>;
