/**
 * A crawl's webhook as its start checks it, the way a Batch job's is checked (core/batch/jobs/webhook.ts):
 * a public https URL by the same target rules (400 `callback_url_must_be_https`, `callback_url_unresolvable`),
 * and `signature: true` only with an active HMAC key (400 `webhook_signing_requires_active_key`); plus
 * which moments it is told of (`events`, by default the four lifecycle ones).
 */
import { problem } from '../../base/errors';
import type { HmacKeys } from '../webhooks/hmac-keys';
import { DEFAULT_CRAWL_WEBHOOK_EVENTS, type CrawlWebhook, type CrawlWebhookEvent } from './types';

/** A webhook URL checked by the fetch engine's target rules (the composition root wires it: core does not import the engine). */
export type CrawlWebhookUrlCheck = (url: string) => Promise<{ ok: true; url: URL } | { ok: false; code: 'callback_url_must_be_https' | 'callback_url_unresolvable' | 'invalid_argument'; detail: string }>;

/** The `webhook` of a start body, as the schema let it through. */
export interface WebhookRequest {
  url: string;
  signature?: boolean;
  events?: CrawlWebhookEvent[];
}

export interface CrawlWebhookDeps {
  /** Absent where no crawl can be started with a webhook. */
  checkWebhookUrl?: CrawlWebhookUrlCheck;
  /** The process's HMAC key store; absent when the server has no SECRETS_KEY. */
  hmacKeys?: HmacKeys;
}

/** The moments asked for, in the order the interface lists them, each once (the default when none is given). */
export function webhookEvents(asked: readonly CrawlWebhookEvent[] | undefined): CrawlWebhookEvent[] {
  const order: readonly CrawlWebhookEvent[] = ['started', 'completed', 'stopped', 'failed', 'page.failed'];
  const wanted = new Set(asked ?? DEFAULT_CRAWL_WEBHOOK_EVENTS);
  return order.filter((event) => wanted.has(event));
}

/** Checks a start body's webhook; answers what the crawl keeps. Refusals change nothing. */
export async function checkCrawlWebhook(deps: CrawlWebhookDeps, accountId: string, webhook: WebhookRequest): Promise<CrawlWebhook> {
  if (!deps.checkWebhookUrl) throw problem('internal', 'Webhook URLs cannot be checked here.');
  const target = await deps.checkWebhookUrl(webhook.url);
  if (!target.ok) {
    // The crawl surface names a bad field as it does for its other fields.
    if (target.code === 'invalid_argument') throw problem('invalid_parameter', target.detail, { members: { parameter: 'webhook.url' } });
    throw problem(target.code, target.detail);
  }
  const signature = webhook.signature === true;
  if (signature) {
    if (!deps.hmacKeys) throw problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.');
    if (!(await deps.hmacKeys.hasActiveKey(accountId))) {
      throw problem('webhook_signing_requires_active_key', 'Signed webhooks need an active HMAC key: call POST /v1/hmac/keys/rotate first.');
    }
  }
  return { url: target.url.href, signature, events: webhookEvents(webhook.events) };
}
