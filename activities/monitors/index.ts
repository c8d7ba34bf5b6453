/** A monitor check's activities: each passes its call to core/monitors/worker.ts (`asActivity` for the long step). */
import type { BeginInput, Begun, CheckEnd } from '../../core/monitors/check';
import type { EventRef } from '../../core/monitors/events';
import type { PagesOutcome } from '../../core/monitors/pages';
import { webhookRetry, type WebhookRetry } from '../../core/webhooks/deliveries';
import type { ActivityDeps } from '../deps';
import { asActivity } from '../failures';

export function monitorActivities(deps: ActivityDeps) {
  const { monitors } = deps;
  return {
    /** Records the check as running, or as skipped when another check of the monitor still runs. */
    async monitorCheckBegin(input: BeginInput): Promise<Begun> {
      return monitors.begin(input);
    },

    /** Fetches, records and bills the check's pages (resumes a retried attempt where it was). */
    async monitorCheckPages(checkId: string): Promise<PagesOutcome> {
      return asActivity((work) => monitors.pages(checkId, work));
    },

    /** The check's end, once, and its webhook events (one per change) to deliver. */
    async monitorCheckEnd(input: { checkId: string } & CheckEnd): Promise<{ status: string; events: EventRef[]; webhookRetry: WebhookRetry }> {
      const { checkId, ...end } = input;
      return { ...(await monitors.end(checkId, end)), webhookRetry: webhookRetry(deps.config) };
    },
  };
}
