/**
 * A crawl body's checks beyond its schema, the same wherever a crawl body is taken: `POST /v1/crawls`
 * (commands.ts) and a crawl-based monitor (core/monitors/inputs.ts), with the same problems.
 */
import { problem } from '../../base/errors';
import { checkStartUrl } from './urls';
import type { WebhookRequest } from './webhook';

/** A crawl request as the start schema validated it. */
export interface StartBody {
  url: string;
  depth?: number;
  max_items?: number;
  max_pages?: number;
  include_patterns?: string[];
  exclude_patterns?: string[];
  /** Signed webhook events of the crawl's moments (our extension; webhook.ts). */
  webhook?: WebhookRequest;
  output_format?: 'html' | 'markdown';
  /** Serve only each page's main content (read-time shaping: the stored HTML stays whole). */
  main_content?: boolean;
  /** Skip what the site's robots.txt disallows (default true). */
  respect_robots?: boolean;
  /** Documents (PDF, office files) are results, converted when pages are kept (default true). */
  include_documents?: boolean;
  /** `["links"]` only: accepted as the official clients send it. */
  discovery?: string[];
  /** Record each fetched result in its URL's history (core/changes); every result is fetched. */
  track_changes?: boolean;
  change_tracking_tag?: string;
}


/** The fetch engine's target check, as the composition root wires it (core does not import the engine). */
export type StartUrlCheck = (url: URL) => Promise<{ ok: true } | { ok: false; reason: string }>;

/** Fields that only go together. */
export function checkStartBody(body: Pick<StartBody, 'main_content' | 'output_format' | 'change_tracking_tag' | 'track_changes'>): void {
  if (body.main_content === true && !body.output_format) {
    throw problem('invalid_parameter', '"main_content" shapes the pages a crawl keeps: it requires "output_format" (html or markdown).', { members: { parameter: 'main_content' } });
  }
  if (body.change_tracking_tag !== undefined && body.track_changes !== true) {
    throw problem('invalid_parameter', '"change_tracking_tag" names a history: it goes with "track_changes": true.', { status: 422, members: { parameter: 'change_tracking_tag' } });
  }
}

/** The start URL's shape, then its addresses by the fetch engine's guard (422 invalid_start_url); answers its registrable domain. */
export async function checkPublicStartUrl(raw: string, checkTarget: StartUrlCheck): Promise<string> {
  const verdict = checkStartUrl(raw);
  if (!verdict.ok) throw problem('invalid_start_url', verdict.reason);
  const target = await checkTarget(verdict.url);
  if (!target.ok) throw problem('invalid_start_url', `The start URL is not public: ${target.reason}.`);
  return verdict.domain;
}
