/** The Fetch answer's headers, shared by the Fetch route and the MCP tools. */
import type { HistoryFetchResult } from '../../core/changes';
import type { FetchResult } from '../../core/fetch/pipeline';
import { EXTRACT_WARNING_HEADER } from '../../core/fetch/extract';
import { AUTO_CONFIGURATION_HEADER, describeRung } from '../../engine';
import { echoTargetHeaders } from './headers';

/** Where the response headers of a Fetch go: the HTTP response, or nowhere for an MCP tool. */
export interface HeaderSink {
  set(name: string, value: string): void;
  append(name: string, value: string): void;
}

/**
 * The Fetch answer's headers, on success and on a target status that is an error alike: the configuration
 * that answered, the final URL, the target's own headers (`Z-` prefixed) and Extract's warning.
 */
export function setFetchHeaders(out: HeaderSink, result: FetchResult): void {
  if (!result.page || !result.rung) return;
  out.set(AUTO_CONFIGURATION_HEADER, describeRung(result.rung));
  out.set('Zr-Final-Url', result.page.finalUrl);
  echoTargetHeaders(out, result.page.headers);
  if (result.ok && result.extractWarning) out.set(EXTRACT_WARNING_HEADER, result.extractWarning);
}

/**
 * Change tracking's headers (our extension): `X-Change-Status`, `X-Previous-Fetched-At` (absent for a
 * first version) and `X-Change-Version-Id` with `track_changes`; `X-Change-Version-Id` and
 * `X-Version-Fetched-At` on an answer from the history (`as_of`).
 */
export function setChangeHeaders(out: HeaderSink, result: HistoryFetchResult): void {
  if (result.change) {
    out.set('X-Change-Status', result.change.status);
    if (result.change.previous) out.set('X-Previous-Fetched-At', result.change.previous.fetchedAt.toISOString());
    out.set('X-Change-Version-Id', result.change.version.id);
  }
  if (result.replayed) {
    out.set('X-Change-Version-Id', result.replayed.id);
    out.set('X-Version-Fetched-At', result.replayed.fetchedAt.toISOString());
  }
}
