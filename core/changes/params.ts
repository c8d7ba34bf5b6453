/**
 * Change tracking's Fetch parameters (our extension): their schema, merged into the Fetch schema (so
 * the OpenAPI document, Batch tasks and the MCP tool take them too), and the rules between them.
 */
import { problem } from '../../base/errors';
import { parseVersionId, TAG_PATTERN } from './keys';
import type { AsOf } from './history';

export const CHANGE_QUERY_PROPERTIES = {
  track_changes: {
    type: 'boolean',
    description:
      'Extension of this service: keep this page as a version of its URL in the account’s history and say whether it changed since the last version: ' +
      'headers X-Change-Status (new, same, changed), X-Previous-Fetched-At and X-Change-Version-Id; with json_response a `change_tracking` member ' +
      '{status, previous_fetched_at, version_id, diff: {text, fields, ignored, added, removed}}. No extra credits.',
  },
  change_tracking_tag: {
    type: 'string',
    pattern: TAG_PATTERN,
    description: 'Extension of this service: a separate history of the same URL (up to 128 letters, digits or _ . : @ / + -). With track_changes or as_of.',
  },
  as_of: {
    type: 'string',
    minLength: 1,
    maxLength: 80,
    description:
      'Extension of this service: answer from the account’s history instead of the site: the version current at this RFC 3339 time (2026-05-01T12:00:00Z), ' +
      'or the version of this id (`v1.…`). Every output is computed from the stored page; 0 credits, no request to the site. ' +
      'Not with track_changes, nor with outputs only a browser makes (screenshots, response_type=pdf, js_instructions).',
  },
} as const;

export interface ChangeParams {
  trackChanges: boolean;
  changeTrackingTag?: string;
  asOf?: AsOf;
}

const invalid = (parameter: string, why: string) => problem('REQS004', `Parameter "${parameter}" ${why}.`, { members: { parameter } });

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** `as_of` as a time or a version id; REQS004 for anything else. */
export function parseAsOf(raw: string): AsOf {
  const value = raw.trim();
  if (value.startsWith('v')) {
    if (!parseVersionId(value)) throw invalid('as_of', 'is not a version id (v1.<hash>.<generation>.<number>, as X-Change-Version-Id or /v1/history gives it)');
    return { kind: 'version', id: value };
  }
  const at = RFC3339.test(value) ? Date.parse(value.replace(' ', 'T')) : Number.NaN;
  if (!Number.isFinite(at)) throw invalid('as_of', 'must be an RFC 3339 time with its offset (2026-05-01T12:00:00Z) or a version id');
  return { kind: 'time', at: new Date(at) };
}

/** The change parameters of a validated Fetch query, and their rules with the browser's outputs. */
export function parseChangeParams(query: Record<string, unknown>, browser: { screenshot: boolean; pdf: boolean; instructions: boolean }): ChangeParams {
  const trackChanges = query.track_changes === true;
  const tag = typeof query.change_tracking_tag === 'string' ? query.change_tracking_tag : undefined;
  const asOf = typeof query.as_of === 'string' ? parseAsOf(query.as_of) : undefined;
  if (asOf && trackChanges) throw invalid('as_of', 'reads the history, track_changes adds to it: send one of them');
  if (tag !== undefined && !trackChanges && !asOf) throw invalid('change_tracking_tag', 'names a history: it goes with track_changes=true or as_of');
  if (asOf && (browser.screenshot || browser.pdf || browser.instructions)) {
    throw invalid('as_of', 'answers from the stored page: screenshots, PDF and browser instructions cannot be made from it');
  }
  return { trackChanges, ...(tag !== undefined ? { changeTrackingTag: tag } : {}), ...(asOf ? { asOf } : {}) };
}
