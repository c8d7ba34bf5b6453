/**
 * A monitor's body checked beyond its schema: the URLs (or the crawl), the outputs compared and the
 * webhook, each refusal a 400 naming the field. Nothing is written here.
 */
import type { Principal } from '../accounts';
import { problem } from '../../base/errors';
import type { WebhookUrlCheck } from '../batch/context';
import { checkPublicStartUrl, checkStartBody, type StartBody } from '../crawls/body';
import type { HmacKeys } from '../webhooks/hmac-keys';
import type { ExtractMode, MonitorCrawl, MonitorOutputs } from './store';

export interface MonitorBody {
  name?: string;
  urls?: string[];
  /** A crawl body, as POST /v1/crawls takes it (its schema validated it). */
  crawl?: StartBody;
  schedule?: { every?: number; unit?: 'second' | 'minute' | 'hour' | 'day'; cron?: string; timezone?: string };
  css_extractor?: Record<string, unknown>;
  /** A mode (`"auto"`), or the mode and the fields compared (`{"mode": "auto", "fields": ["price"]}`). */
  extract?: ExtractMode | { mode?: ExtractMode; fields?: string[] };
  main_content?: boolean;
  webhook?: { url: string; signature?: boolean } | null;
}

/** A URL checked by the fetch engine's target rules (wired by the composition root). */
export type TargetCheck = (url: URL) => Promise<{ ok: true } | { ok: false; reason: string }>;

export interface InputDeps {
  checkTarget: TargetCheck;
  checkWebhookUrl: WebhookUrlCheck;
  hmacKeys: HmacKeys | undefined;
}

const invalid = (parameter: string, detail: string): never => {
  throw problem('invalid_argument', detail, { members: { parameter } });
};

type Verdicts = Map<string, Promise<{ ok: true } | { ok: false; reason: string }>>;

/** A URL checked by the target rules; `verdicts` asks each host once per body. */
async function checkedUrl(deps: InputDeps, raw: string, parameter: string, verdicts: Verdicts = new Map()): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid(parameter, `"${raw.slice(0, 100)}" is not a URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid(parameter, 'Monitored URLs are http or https.');
  const key = `${url.protocol}//${url.host}`;
  const asked = verdicts.get(key) ?? deps.checkTarget(url);
  verdicts.set(key, asked);
  const verdict = await asked;
  if (!verdict.ok) return invalid(parameter, `${url.href.slice(0, 200)} cannot be monitored: ${verdict.reason}`);
  return url.href;
}

/** The URLs, deduplicated in order. */
export async function checkUrls(deps: InputDeps, urls: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const verdicts: Verdicts = new Map();
  for (const [index, raw] of urls.entries()) seen.add(await checkedUrl(deps, raw, `urls[${index}]`, verdicts));
  return [...seen];
}

/** A crawl body's fields that belong to a crawl job, not to a monitor's checks: refused by name. */
const NOT_ON_MONITORS = {
  webhook: 'a monitor announces its changes through its own `webhook`',
  output_format: 'a monitor keeps no pages to serve; it compares `css_extractor` fields or `main_content`',
  main_content: 'set `main_content` on the monitor itself, beside `crawl`',
  track_changes: 'a monitor records every page it checks in its own history',
  change_tracking_tag: 'a monitor’s pages are recorded under its own tag, monitor:<monitor_id>',
} as const;

/** `max_items` and `max_pages` when the crawl body omits them: a crawl's defaults (CRAWL_DEFAULT_MAX_ITEMS, _PAGES). */
export interface CrawlDefaults {
  maxItems: number;
  maxPages: number;
}

export const crawlLimits = (crawl: StartBody, defaults: CrawlDefaults): { max_items: number; max_pages: number } => ({
  max_items: crawl.max_items ?? defaults.maxItems,
  max_pages: crawl.max_pages ?? defaults.maxPages,
});

/** Checked as POST /v1/crawls checks it (the same problems), then what has no meaning on a monitor is refused. */
export async function checkCrawl(deps: InputDeps, crawl: StartBody, defaults: CrawlDefaults): Promise<MonitorCrawl> {
  checkStartBody(crawl);
  for (const [field, why] of Object.entries(NOT_ON_MONITORS)) {
    if ((crawl as unknown as Record<string, unknown>)[field] !== undefined) invalid(`crawl.${field}`, `\`crawl.${field}\` is not taken on a monitor: ${why}.`);
  }
  await checkPublicStartUrl(crawl.url, deps.checkTarget);
  return {
    url: new URL(crawl.url.trim()).href,
    ...(crawl.depth !== undefined ? { depth: crawl.depth } : {}),
    ...crawlLimits(crawl, defaults),
    include_patterns: crawl.include_patterns ?? [],
    exclude_patterns: crawl.exclude_patterns ?? [],
    respect_robots: crawl.respect_robots !== false,
    ...(crawl.include_documents === false ? { include_documents: false as const } : {}),
  };
}

const EXTRACT_MODES: readonly string[] = ['auto', 'native', 'standard'] satisfies ExtractMode[];
/** A field as `extract_fields` names it: dotted names of the recipe's fields (`agent.name`, `items.price`). */
const FIELD_NAME = /^[\p{L}\p{N}_-]+(\.[\p{L}\p{N}_-]+)*$/u;

/** Extract's output as a monitor compares it: the mode (auto by default) and the fields, each checked here; the recipe's are checked at each check. */
function checkExtract(extract: NonNullable<MonitorBody['extract']>): NonNullable<MonitorOutputs['extract']> {
  const given = typeof extract === 'string' ? { mode: extract } : extract;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return invalid('extract', '`extract` is a mode ("auto", "native" or "standard") or `{mode, fields}`.');
  const unknown = Object.keys(given).find((key) => key !== 'mode' && key !== 'fields');
  if (unknown !== undefined) return invalid(`extract.${unknown.slice(0, 50)}`, '`extract` takes `mode` and `fields` only.');
  const mode = given.mode ?? 'auto';
  if (!EXTRACT_MODES.includes(mode)) return invalid('extract.mode', '`extract.mode` is "auto", "native" or "standard".');
  if (given.fields === undefined) return { mode };
  if (!Array.isArray(given.fields) || given.fields.length === 0 || given.fields.length > 50) return invalid('extract.fields', '`extract.fields` lists 1 to 50 field names.');
  for (const [index, field] of given.fields.entries()) {
    if (typeof field !== 'string' || field.length > 200 || !FIELD_NAME.test(field)) {
      return invalid(`extract.fields[${index}]`, '`extract.fields` are field names of the domain\'s recipe, dotted for grouped fields (`price`, `agent.name`, `items.price`).');
    }
  }
  return { mode, fields: [...new Set(given.fields)] };
}

export function checkOutputs(body: MonitorBody): MonitorOutputs {
  if (body.css_extractor !== undefined && Object.keys(body.css_extractor).length === 0) invalid('css_extractor', '`css_extractor` names at least one field.');
  // On Fetch `extract` wins over css_extractor silently; a monitor compares one set of fields, so it is told.
  if (body.extract !== undefined && body.css_extractor !== undefined) invalid('extract', 'Compare fields with `extract` or with `css_extractor`, not both.');
  return {
    ...(body.css_extractor !== undefined ? { css_extractor: body.css_extractor } : {}),
    ...(body.extract !== undefined ? { extract: checkExtract(body.extract) } : {}),
    ...(body.main_content ? { main_content: true } : {}),
  };
}

/** As on Batch jobs: a public https URL, and signing needs the account's active HMAC key. */
export async function checkWebhook(deps: InputDeps, principal: Principal, webhook: { url: string; signature?: boolean }): Promise<{ url: string; signature: boolean }> {
  const target = await deps.checkWebhookUrl(webhook.url);
  if (!target.ok) throw problem(target.code, target.detail, { members: { parameter: 'webhook.url' } });
  const signature = webhook.signature === true;
  if (signature) {
    if (!deps.hmacKeys) throw problem('internal', 'Signing keys are unavailable: the server has no SECRETS_KEY configured.');
    if (!(await deps.hmacKeys.signingKey(principal.accountId))) throw problem('webhook_signing_requires_active_key', 'Signed webhooks need an active HMAC key: call POST /v1/hmac/keys/rotate first.');
  }
  return { url: target.url.href, signature };
}
