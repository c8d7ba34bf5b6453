/**
 * Starting a crawl: check the start URL, honour `Idempotency-Key`, refuse an account without credits
 * (402) or already running its active jobs (429), then record the crawl and start its workflow.
 * Anything refused starts nothing and costs nothing.
 */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { refusalError, type Principal } from '../../core/accounts';
import { ActiveJobs } from '../../core/jobs/active-jobs';
import { IdempotencyKeys, MAX_IDEMPOTENCY_KEY_LENGTH } from '../../core/jobs/idempotency';
import { crawlJobChecker } from '../../core/crawls/jobs';
import { crawlCollections, newCrawlDocument } from '../../core/crawls/store';
import type { CrawlSpec, CrawlTuning } from '../../core/crawls/types';
import { checkStartUrl } from '../../core/crawls/urls';
import { ACCOUNT_ATTRIBUTE, CRAWL_WORKFLOW_TYPE, crawlWorkflowId, STATUS_ATTRIBUTE } from '../../core/crawls/workflow-names';
import { problem } from '../../core/errors';
import { newId } from '../../core/ids';
import { createTargetGuard, type TargetGuard } from '../../engine';
import type { ApiDeps } from '../deps';

export interface StartBody {
  url: string;
  depth?: number;
  max_items?: number;
  max_pages?: number;
  include_patterns?: string[];
  exclude_patterns?: string[];
  output_format?: 'html' | 'markdown';
  /** `["links"]` only: accepted as the official clients send it. */
  discovery?: string[];
}

export class CrawlStarter {
  private readonly guard: TargetGuard;
  private readonly idempotency: IdempotencyKeys;
  readonly activeJobs: ActiveJobs;

  constructor(private readonly deps: ApiDeps) {
    this.guard = createTargetGuard(deps.config);
    this.idempotency = new IdempotencyKeys(deps.db.db, 'crawl');
    this.activeJobs = new ActiveJobs(deps.db.db, { crawl: crawlJobChecker(deps.db.db) });
  }

  /** Starts the crawl (or finds the one this key started) and returns its id. */
  async start(principal: Principal, body: StartBody, idempotencyKey: string | undefined): Promise<string> {
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      throw problem('invalid_request', `The Idempotency-Key header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
    }
    const domain = await this.checkUrl(body.url);
    if (idempotencyKey === undefined) return this.create(principal, body, domain);
    const claim = await this.idempotency.claim(principal.accountId, idempotencyKey, body);
    switch (claim.kind) {
      case 'replay':
        return claim.resultId;
      case 'in_flight':
        throw problem('idempotency_request_in_flight', 'A request with this Idempotency-Key is still in progress; retry when it ends.');
      case 'reused':
        throw problem('idempotency_key_reused', 'This Idempotency-Key was used with a different body.');
      case 'claimed':
        try {
          const crawlId = await this.create(principal, body, domain);
          await claim.complete(crawlId);
          return crawlId;
        } catch (error) {
          await claim.drop().catch(() => undefined);
          throw error;
        }
    }
  }

  private async checkUrl(raw: string): Promise<string> {
    const verdict = checkStartUrl(raw);
    if (!verdict.ok) throw problem('invalid_start_url', verdict.reason);
    const policy = this.guard.checkUrl(verdict.url);
    if (!policy.ok) throw problem('invalid_start_url', `The start URL is not public: ${policy.reason}.`);
    const resolution = await this.guard.resolve(verdict.url.hostname);
    if (!resolution.ok && resolution.kind === 'target_forbidden') throw problem('invalid_start_url', `The start URL is not public: ${resolution.reason}.`);
    return verdict.domain;
  }

  private async create(principal: Principal, body: StartBody, domain: string): Promise<string> {
    const { config, accounts, db, temporal } = this.deps;
    const probe = await accounts.charging.tryReserve(principal, 1);
    if ('refused' in probe) throw refusalError(probe.refused, 'crawl', principal);
    await probe.release();

    const crawlId = newId('c');
    const grant = await this.activeJobs.acquire(principal.accountId, principal.plan.activeJobs, { id: crawlId, kind: 'crawl' });
    if (!grant.ok) {
      throw problem('too_many_crawls', `The account already runs its ${principal.plan.activeJobs} active jobs (Crawl and Batch together); retry when one ends.`, {
        headers: { 'Retry-After': '30' },
      });
    }
    const { crawls } = crawlCollections(db.db);
    try {
      const doc = newCrawlDocument({
        _id: crawlId,
        account_id: principal.accountId,
        key_id: principal.keyId,
        // As the URL standard writes it (scheme and host lower-cased, default port dropped): what `format: uri` promises on the way out.
        url: new URL(body.url.trim()).href,
        domain,
        ...(body.depth !== undefined ? { depth: body.depth } : {}),
        max_items: body.max_items ?? config.crawlDefaultMaxItems,
        max_pages: body.max_pages ?? config.crawlDefaultMaxPages,
        include_patterns: body.include_patterns ?? [],
        exclude_patterns: body.exclude_patterns ?? [],
        ...(body.output_format ? { output_format: body.output_format } : {}),
      });
      await crawls.insertOne(doc);
      const spec: CrawlSpec = {
        crawlId,
        accountId: principal.accountId,
        keyId: principal.keyId,
        url: doc.url,
        domain,
        ...(doc.depth !== undefined ? { depth: doc.depth } : {}),
        maxItems: doc.max_items,
        maxPages: doc.max_pages,
        include: doc.include_patterns,
        exclude: doc.exclude_patterns,
        ...(doc.output_format ? { outputFormat: doc.output_format } : {}),
      };
      const tuning: CrawlTuning = {
        slicePages: config.crawlSlicePages,
        window: config.crawlSliceWindow,
        concurrency: config.crawlConcurrency,
        historyLimit: config.crawlHistoryEvents,
      };
      try {
        await temporal.client.workflow.start(CRAWL_WORKFLOW_TYPE, {
          taskQueue: config.temporalTaskQueue,
          workflowId: crawlWorkflowId(crawlId),
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [{ spec, tuning }],
          typedSearchAttributes: [
            { key: ACCOUNT_ATTRIBUTE, value: principal.accountId },
            { key: STATUS_ATTRIBUTE, value: 'running' },
          ],
        });
      } catch (error) {
        await crawls.deleteOne({ _id: crawlId }).catch(() => undefined);
        throw error;
      }
    } catch (error) {
      await this.activeJobs.release(crawlId).catch(() => undefined);
      throw error;
    }
    return crawlId;
  }
}
