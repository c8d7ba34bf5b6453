/**
 * What every Batch route shares: the commands (core/batch/commands.ts, built by the process's
 * composition root), the capability links and the presenter of results (present-results.ts).
 * Built once per API process.
 */
import { createLinks, type Links } from '../../core/batch/links';
import { problem } from '../../base/errors';
import { authenticate, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { AppContext } from '../http/context';
import { batchIssues } from '../webhooks/routes';
import type { Presenter } from './present-results';

export function createBatchContext(deps: ApiDeps) {
  const commands = deps.services.batch;
  let links: Links | undefined;
  const linksOf = (): Links => {
    if (!deps.config.secretsKey) throw problem('internal', 'Result links are unavailable: the server has no SECRETS_KEY configured.');
    return (links ??= createLinks(deps.config.secretsKey));
  };
  const ttlMs = deps.config.batchLinkTtlMinutes * 60_000;
  const common = { tags: ['Batch'], security: securityOf('batch'), before: [authenticate(deps, 'batch')], issues: batchIssues };

  /** Links are built from PUBLIC_URL, never from the request's Host header (which the caller chooses). */
  const originOf = (_ctx: AppContext): string => deps.config.publicUrl;
  const presenterOf = (ctx: AppContext): Presenter => ({
    docsUrl: deps.config.docsUrl,
    resultUrl: (jobId, runId, taskId) => `${originOf(ctx)}/v1/batch/links/results/${linksOf().sign('result', `${jobId}:${runId}:${taskId}`, Date.now() + ttlMs)}`,
  });
  const idempotencyKeyOf = (ctx: AppContext): string | undefined => (ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('Idempotency-Key'));

  return { deps, commands, linksOf, ttlMs, common, originOf, presenterOf, idempotencyKeyOf };
}

export type BatchContext = ReturnType<typeof createBatchContext>;
