/**
 * `mode=auto`: walk the rungs from the cheapest one likely to work, escalating only when blocked.
 *
 *   start = the domain's remembered rung, else the cheapest
 *   loop: fetch with the rung's engine ──▶ failure that another rung cannot fix? stop
 *                                     ──▶ not blocked? remember the rung, return it (billed its cost)
 *                                     ──▶ blocked: add what the block needs; next = the cheapest higher
 *                                         rung that has every capability needed so far
 *   no rung left ──▶ RESP001
 *
 * The fetchers are injected (the plain transport and the browser renderer), so is the memory. Outcomes
 * are values with `ok`: a success carries status, headers and a body (or rendered `html`); a failure
 * carries `error.kind`.
 */
import type { Logger } from '../../base/log';
import { failureOf } from '../failures';
import { detectBlock, type BlockVerdict, type ResponseView } from './detect';
import type { RungMemory } from './memory';
import { RUNGS, rungById, type Capability, type Rung, type RungId } from './rungs';

export type LadderSuccess = { ok: true } & ResponseView;
export interface LadderFailure {
  ok: false;
  error: { kind: string; detail: string };
}

export type Fetcher<Q, S extends LadderSuccess, F extends LadderFailure> = (request: Q, rung: Rung) => Promise<S | F>;

export interface LadderFetchers<Q, S extends LadderSuccess, F extends LadderFailure> {
  fetchPlain: Fetcher<Q, S, F>;
  fetchRendered: Fetcher<Q, S, F>;
}

export interface Attempt {
  rung: RungId;
  outcome: 'success' | 'blocked' | 'failed';
  status?: number;
  /** Why the attempt did not return the page (block reason or failure kind). */
  reason?: string;
  duration_ms: number;
}

export type LadderResult<S, F> =
  | { ok: true; rung: Rung; result: S; attempts: Attempt[] }
  /** Every rung tried was blocked or failed: answer `RESP001`. */
  | { ok: false; reason: 'exhausted'; code: 'RESP001'; detail: string; attempts: Attempt[] }
  /** A failure no other configuration can fix (a refused target, a bad parameter): answer it as is. */
  | { ok: false; reason: 'stopped'; rung: Rung; failure: F; attempts: Attempt[] };

export interface LadderOptions {
  rungs?: readonly Rung[];
  detect?: (response: ResponseView) => BlockVerdict;
  /** Whether a failure of this kind is one no other configuration can fix (default: the failure table's `escalate`). */
  endsLadder?: (kind: string) => boolean;
  log?: Logger;
}

const tableEndsLadder = (kind: string): boolean => !failureOf(kind).escalate;

export const EXHAUSTED_DETAIL =
  'The target could not be returned under any configuration; try js_render=true and premium_proxy=true, or mode=auto later.';

export async function runLadder<Q extends { url: string }, S extends LadderSuccess, F extends LadderFailure>(
  request: Q,
  fetchers: LadderFetchers<Q, S, F>,
  memory: RungMemory,
  options: LadderOptions = {},
): Promise<LadderResult<S, F>> {
  const rungs = [...(options.rungs ?? RUNGS)].sort((a, b) => a.cost - b.cost);
  const detect = options.detect ?? detectBlock;
  const endsLadder = options.endsLadder ?? tableEndsLadder;
  const recalled = await memory.recall(request.url).catch((error: unknown) => {
    options.log?.warn('domain rung memory unreadable', { error });
    return undefined;
  });
  const remembered = recalled ? rungById(recalled.rung, rungs) : undefined;
  const needs = new Set<Capability>();
  const attempts: Attempt[] = [];
  // A remembered rung past half its life is re-tested one rung down: a block that went away (or a
  // climb that was never earned) decays instead of being billed for the rest of its life.
  let rung: Rung | undefined = remembered && recalled?.stale ? (lowerRung(rungs, remembered) ?? remembered) : (remembered ?? rungs[0]);
  while (rung) {
    const began = Date.now();
    const fetcher = rung.engine === 'rendered' ? fetchers.fetchRendered : fetchers.fetchPlain;
    const outcome = await fetcher(request, rung);
    const duration_ms = Date.now() - began;
    if (!outcome.ok) {
      attempts.push({ rung: rung.id, outcome: 'failed', reason: outcome.error.kind, duration_ms });
      if (endsLadder(outcome.error.kind)) return { ok: false, reason: 'stopped', rung, failure: outcome, attempts };
    } else {
      const verdict = detect(outcome);
      if (!verdict.blocked) {
        attempts.push({ rung: rung.id, outcome: 'success', status: outcome.status, duration_ms });
        if (!recalled || recalled.rung !== rung.id || recalled.stale) {
          await memory.remember(request.url, rung.id).catch((error: unknown) => options.log?.warn('domain rung memory unwritable', { error }));
        }
        return { ok: true, rung, result: outcome, attempts };
      }
      attempts.push({ rung: rung.id, outcome: 'blocked', status: outcome.status, reason: verdict.reason, duration_ms });
      for (const need of verdict.needs) needs.add(need);
    }
    rung = nextRung(rungs, rung, needs);
  }
  options.log?.info('every configuration was blocked', { url: request.url, attempts });
  return { ok: false, reason: 'exhausted', code: 'RESP001', detail: EXHAUSTED_DETAIL, attempts };
}

/** The dearest rung below `current`, if any. */
function lowerRung(rungs: readonly Rung[], current: Rung): Rung | undefined {
  return [...rungs].reverse().find((rung) => rung.cost < current.cost);
}

/** The cheapest rung above `current` that brings every capability needed so far. */
function nextRung(rungs: readonly Rung[], current: Rung, needs: ReadonlySet<Capability>): Rung | undefined {
  return rungs.find((rung) => rung.cost > current.cost && [...needs].every((need) => rung.capabilities.includes(need)));
}
