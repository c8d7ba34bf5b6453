/**
 * What every Batch route shares: the commands, the collections, the capability links, the presenters
 * and the look-ups of an account's job and run. Built once per API process.
 */
import type { Principal } from '../../core/accounts';
import { createBatchCommands } from '../../core/batch/jobs';
import { createLinks, type Links } from '../../core/batch/links';
import { findTask, presentJob, readBody, type Presenter } from '../../core/batch/read';
import { isDeleted, type RunView } from '../../core/batch/runs';
import { batchCollections, taskPlace, type JobDoc, type RunDoc, type WebhookSetting } from '../../core/batch/store';
import { problem } from '../../core/errors';
import { createHmacKeys } from '../../core/webhooks/hmac-keys';
import { createSecretBox } from '../../core/webhooks/secret-box';
import { createWebhookEvents } from '../../core/webhooks/events';
import { checkWebhookUrl } from '../../engine';
import { authenticate, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { AppContext } from '../http/context';
import { batchIssues } from '../webhooks/routes';
import { SANDBOX } from './schemas';

export function createBatchContext(deps: ApiDeps) {
  const commands = createBatchCommands({ db: deps.db.db, accounts: deps.accounts, temporal: deps.temporal, config: deps.config });
  const collections = batchCollections(deps.db.db);
  const { guard } = deps.fetching;
  const events = createWebhookEvents(deps.db.db);
  let links: Links | undefined;
  const linksOf = (): Links => {
    if (!deps.config.secretsKey) throw problem('internal', 'Result links are unavailable: the server has no SECRETS_KEY configured.');
    return (links ??= createLinks(deps.config.secretsKey));
  };
  const ttlMs = deps.config.batchLinkTtlMinutes * 60_000;
  const common = { tags: ['Batch'], security: securityOf('batch'), before: [authenticate(deps, 'batch')], issues: batchIssues };

  /** Links point at the host the caller reached (behind a proxy, with PROXY set, the forwarded one). */
  const originOf = (ctx: AppContext): string => `${ctx.protocol}://${ctx.host}`;
  const presenterOf = (ctx: AppContext): Presenter => ({
    docsUrl: deps.config.docsUrl,
    resultUrl: (jobId, runId, taskId) => `${originOf(ctx)}/v1/batch/links/results/${linksOf().sign('result', `${jobId}:${runId}:${taskId}`, Date.now() + ttlMs)}`,
  });
  const scheduleRules = () => ({ minIntervalSeconds: deps.config.batchScheduleMinIntervalSeconds, now: Date.now() });
  const perCredit = (principal: Principal): number => (principal.plan.credits > 0 ? principal.plan.price / principal.plan.credits : 0);

  const checkWebhook = async (principal: Principal, webhook: { url: string; signature?: boolean } | undefined): Promise<WebhookSetting | undefined> => {
    if (!webhook) return undefined;
    const target = await checkWebhookUrl(guard, webhook.url);
    if (!target.ok) throw problem(target.code, target.detail);
    const signature = webhook.signature === true;
    if (signature) {
      if (!deps.config.secretsKey) throw problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.');
      const key = await createHmacKeys(deps.db.db, createSecretBox(deps.config.secretsKey)).signingKey(principal.accountId);
      if (!key) throw problem('webhook_signing_requires_active_key', 'Signed webhooks need an active HMAC key: call POST /v1/hmac/keys/rotate first.');
    }
    return { url: target.url.href, signature };
  };

  const viewOf = async (job: JobDoc, runId: string | undefined): Promise<RunView> => {
    const view = runId ? await commands.runs.one({ _id: runId, job_id: job._id }) : await commands.latestRun(job);
    if (!view || isDeleted(view)) throw problem('not_found', runId ? `No run ${runId} in job ${job._id}.` : `Job ${job._id} has no run yet.`);
    return view;
  };
  const runOf = async (job: JobDoc, runId: string | undefined): Promise<RunDoc> => (await viewOf(job, runId)).run;

  const jobView = async (job: JobDoc) => presentJob(job, await commands.latestRun(job));

  const page = <T extends { _id: string }>(docs: T[], limit: number, cursorOf: (doc: T) => string) => ({
    items: docs.slice(0, limit),
    next_cursor: docs.length > limit ? cursorOf(docs[limit - 1] as T) : null,
  });


  const sendTaskBody = async (ctx: AppContext, job: JobDoc, run: RunDoc, taskId: string): Promise<void> => {
    const place = taskPlace(taskId);
    const found = place ? await findTask(deps.db.db, job, run, place) : undefined;
    if (!found) throw problem('not_found', `No task ${taskId} in job ${job._id}.`);
    const { item } = found;
    if (!item || item.s !== 'successful' || item.at === undefined) {
      throw problem('conflict', `Task ${taskId} has no body: it is ${item?.s ?? 'pending'}.`, { members: { reason: 'task_not_ready' } });
    }
    const body = await readBody(deps.db.db, run._id, found.slice, found.seq - found.slice.first, item);
    ctx.set(SANDBOX);
    ctx.set('Content-Type', item.ct ?? 'application/octet-stream');
    ctx.body = body;
  };

  return { deps, commands, collections, events, linksOf, ttlMs, common, originOf, presenterOf, scheduleRules, perCredit, checkWebhook, viewOf, runOf, jobView, page, sendTaskBody };
}

export type BatchContext = ReturnType<typeof createBatchContext>;
