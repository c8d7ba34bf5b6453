/**
 * Where a webhook may be delivered: a public https URL, judged by the same target policy as Fetch
 * (`TARGET_ALLOWLIST` opens loopback receivers for development and tests). Checked when the webhook is
 * set and again before every delivery attempt, since DNS may change in between.
 */
import type { TargetGuard } from '../safety';
import type { ErrorCode } from '../../base/errors';

export const WEBHOOK_URL_MAX_LENGTH = 2048;
/** Receivers' names must resolve quickly; a slow resolver is treated as no answer. */
const RESOLVE_TIMEOUT_MS = 1_000;

export type WebhookTargetVerdict =
  | { ok: true; url: URL }
  | { ok: false; code: Extract<ErrorCode, 'invalid_argument' | 'callback_url_must_be_https' | 'callback_url_unresolvable'>; tag: 'refused_target' | 'unresolvable' | 'invalid_url'; detail: string };

/** Scheme, shape and policy: what can be judged without a lookup. */
export function checkWebhookUrlShape(guard: TargetGuard, raw: string): WebhookTargetVerdict {
  const refuse = (code: 'invalid_argument' | 'callback_url_must_be_https', detail: string, tag: 'refused_target' | 'invalid_url' = 'invalid_url') =>
    ({ ok: false, code, tag, detail }) as const;
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return refuse('invalid_argument', `webhook.url is longer than ${WEBHOOK_URL_MAX_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('invalid_argument', 'webhook.url is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:') return refuse('callback_url_must_be_https', `webhook.url must use https, not ${url.protocol.replace(/:$/, '')}.`);
  if (url.username || url.password) return refuse('invalid_argument', 'webhook.url must not carry credentials; put a secret in the path or use signed deliveries.');
  const verdict = guard.checkUrl(url);
  if (!verdict.ok) return refuse('invalid_argument', `webhook.url is refused: ${verdict.reason}.`, 'refused_target');
  return { ok: true, url };
}

/** The whole check: shape, then the host's addresses (each must be public, as for Fetch). */
export async function checkWebhookUrl(guard: TargetGuard, raw: string): Promise<WebhookTargetVerdict> {
  const shape = checkWebhookUrlShape(guard, raw);
  if (!shape.ok) return shape;
  const host = shape.url.hostname.replace(/^\[|\]$/g, '');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), RESOLVE_TIMEOUT_MS);
  });
  const resolution = await Promise.race([guard.resolve(host), timeout]).finally(() => clearTimeout(timer));
  if (resolution === 'timeout') {
    return { ok: false, code: 'callback_url_unresolvable', tag: 'unresolvable', detail: `webhook.url host ${host} did not resolve within a second.` };
  }
  if (!resolution.ok) {
    return resolution.kind === 'dns_failed'
      ? { ok: false, code: 'callback_url_unresolvable', tag: 'unresolvable', detail: `webhook.url: ${resolution.reason}.` }
      : { ok: false, code: 'invalid_argument', tag: 'refused_target', detail: `webhook.url is refused: ${resolution.reason}.` };
  }
  return shape;
}
