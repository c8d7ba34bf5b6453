/**
 * `/v1/monitors` as commands: create (caps, the plan's shortest interval, the Schedule), list, read,
 * change, delete, pause, resume, check now, and a monitor's checks with their changes. Another
 * account's monitor reads as missing (404).
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Accounts, Principal } from '../accounts';
import { checkLimit } from '../accounts/limits';
import type { Config } from '../../base/config';
import { problem } from '../../base/errors';
import { newId } from '../../base/ids';
import { extractNotInPlan } from '../fetch/calls';
import { cursorCodec } from '../jobs/cursor';
import { ACCOUNT_ATTRIBUTE, JOB_ATTRIBUTE, MONITOR_CHECK_WORKFLOW_TYPE, STATUS_ATTRIBUTE, monitorManualCheckId } from '../jobs/workflow-names';
import { checkCrawl, checkOutputs, checkUrls, checkWebhook, crawlLimits, type InputDeps, type MonitorBody } from './inputs';
import { createMonitorSchedules, minIntervalOf, parseMonitorSchedule, type MonitorSchedule } from './schedule';
import { markListsDeleted, readList, removeLists, shownMonitor, shownMonitors, writeList } from './lists';
import { crawlPages, emptyCounts, type CheckDoc, type MonitorDoc, type MonitorOutputs, type MonitorStore, type PageDoc, type ShownMonitor } from './store';
import { byUrl, storedCheck } from './stored';

export interface MonitorCommandDeps extends InputDeps {
  store: MonitorStore;
  accounts: Accounts;
  temporal: { client: Client };
  config: Pick<Config, 'temporalTaskQueue' | 'monitorMinIntervalSeconds' | 'crawlDefaultMaxItems' | 'crawlDefaultMaxPages'>;
}

const idCursor = cursorCodec<string>('m1', {
  write: (id) => [id],
  read: (parts) => (parts.length === 1 && /^[a-z]{3}_[0-9a-z]{26}$/.test(parts[0] as string) ? parts[0] : undefined),
});

/** The workflow service refused the schedule itself (INVALID_ARGUMENT): the caller's to fix, not a 5xx. */
const scheduleRefusal = (error: unknown): unknown =>
  (error as { code?: unknown }).code === 3 ? problem('invalid_argument', 'The workflow service refused this schedule.', { members: { parameter: 'schedule' } }) : error;

export interface Listed<T> {
  items: T[];
  nextCursor: string | null;
}

export function createMonitorCommands(deps: MonitorCommandDeps) {
  const { store, accounts } = deps;
  const schedules = createMonitorSchedules(deps.temporal.client, deps.config.temporalTaskQueue);

  const own = async (principal: Principal, monitorId: string): Promise<MonitorDoc> => {
    const monitor = await store.monitors.findOne({ _id: monitorId, account_id: principal.accountId });
    if (!monitor || monitor.status === 'deleted') throw problem('not_found', `No monitor ${monitorId.slice(0, 64)} on this account.`);
    return monitor;
  };

  /**
   * A check started now whose workflow has not written its record yet (a moment after the 202): shown
   * running from its workflow, so the `check_id` a client was just given is never a 404.
   */
  const startedCheck = async (monitor: MonitorDoc, checkId: string): Promise<CheckDoc | null> => {
    if (!/^chk_[0-9a-z]{1,60}$/.test(checkId)) return null;
    let described: { startTime: Date; status: { name: string } };
    try {
      described = await deps.temporal.client.workflow.getHandle(monitorManualCheckId(monitor._id, checkId)).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    if (described.status.name !== 'RUNNING') return null;
    return {
      _id: checkId,
      monitor_id: monitor._id,
      account_id: monitor.account_id,
      trigger: 'manual',
      status: 'running',
      baseline: monitor.baseline_at === null,
      started_at: described.startTime,
      ended_at: null,
      scheduled_at: null,
      ...emptyCounts(),
    };
  };

  const nextCheck = (monitor: MonitorDoc): Promise<Date | null> => schedules.nextFire(monitor._id, monitor.schedule).catch(() => null);

  const decode = (resource: string | null, cursor: string | undefined): string | undefined => {
    if (cursor === undefined) return undefined;
    const decoded = idCursor.decode(resource, cursor);
    if (!decoded.ok) throw problem('invalid_argument', 'The cursor is not one of this listing.', { members: { parameter: 'cursor' } });
    return decoded.position;
  };

  /** What the monitor watches, checked; `urlsHeld` the account's other monitors' URLs. */
  const watched = async (principal: Principal, body: MonitorBody, urlsHeld: number) => {
    if ((body.urls === undefined) === (body.crawl === undefined)) throw problem('invalid_argument', 'A monitor has `urls` or `crawl`, not both.', { members: { parameter: 'urls' } });
    const defaults = { maxItems: deps.config.crawlDefaultMaxItems, maxPages: deps.config.crawlDefaultMaxPages };
    // The cap first: no URL is resolved for a body the plan refuses anyway. A crawl counts the pages a check may fetch.
    checkLimit(principal, 'monitorUrls', urlsHeld, body.urls ? new Set(body.urls).size : crawlPages(crawlLimits(body.crawl as NonNullable<MonitorBody['crawl']>, defaults)));
    const urls = body.urls ? await checkUrls(deps, body.urls) : null;
    const crawl = body.crawl ? await checkCrawl(deps, body.crawl, defaults) : null;
    const count = urls ? urls.length : crawlPages(crawl as NonNullable<typeof crawl>);
    checkLimit(principal, 'monitorUrls', urlsHeld, count);
    return { urls, crawl, url_count: count };
  };

  /** The outputs compared; `extract` as on Fetch: only on plans that include Extract (402 AUTH010 before anything is made). */
  const outputsFor = (principal: Principal, body: MonitorBody): MonitorOutputs => {
    const outputs = checkOutputs(body);
    if (outputs.extract && !principal.plan.extract) throw extractNotInPlan(accounts.plans, principal);
    return outputs;
  };

  /**
   * The URLs of the account's monitors but `except`: every monitor it holds has one of its `monitors`
   * slots, so they are read by key (a filter on the account reads every account's monitors).
   */
  const urlsHeld = async (principal: Principal, except?: string): Promise<number> => {
    const ids = (await accounts.holdings.holders(principal, 'monitors')).filter((id) => id !== except);
    if (ids.length === 0) return 0;
    const held = await store.monitors.find({ _id: { $in: ids } }, { projection: { url_count: 1, status: 1 } }).toArray();
    return held.reduce((sum, monitor) => sum + (monitor.status === 'deleted' ? 0 : monitor.url_count), 0);
  };

  return {
    async create(principal: Principal, body: MonitorBody): Promise<{ monitor: ShownMonitor; nextCheckAt: Date | null }> {
      if (body.schedule === undefined) throw problem('invalid_argument', '`schedule` is required.', { members: { parameter: 'schedule' } });
      const schedule = parseMonitorSchedule(body.schedule, minIntervalOf(deps.config, principal));
      const outputs = outputsFor(principal, body);
      const webhook = body.webhook ? await checkWebhook(deps, principal, body.webhook) : null;
      accounts.holdings.refusedNow(principal.accountId, 'monitors');
      const monitorId = newId('mon');
      // One of the account's numbered `monitors` slots (limit_slots), taken before anything is made, as in every API process.
      const holder = { id: monitorId, states: (ids: string[]) => monitorStates(store, ids) };
      const outcome = await accounts.holdings.admit(principal, 'monitors', holder, async () => {
        // Past monitor_urls is answered, not thrown (the gate would remember it as a refusal of `monitors`); its slot is given back below.
        let target: Awaited<ReturnType<typeof watched>>;
        try {
          target = await watched(principal, body, await urlsHeld(principal));
        } catch (error) {
          return { refused: error };
        }
        const now = new Date();
        const { urls, ...watching } = target;
        const monitor: MonitorDoc = {
          _id: monitorId,
          account_id: principal.accountId,
          key_id: principal.keyId,
          name: body.name ?? '',
          ...watching,
          schedule,
          outputs,
          webhook,
          status: 'active',
          baseline_at: null,
          last_check_id: null,
          check_count: 0,
          created_at: now,
          updated_at: now,
        };
        // The list first: the monitor's document is what makes it exist.
        if (urls) await writeList(store, monitorId, 'urls', urls);
        await store.monitors.insertOne(monitor);
        try {
          await schedules.create(monitor._id, principal.accountId, schedule, false);
        } catch (error) {
          // Nothing is left behind by a start that did not happen.
          await store.monitors.deleteOne({ _id: monitor._id });
          await removeLists(store, monitor._id);
          throw scheduleRefusal(error);
        }
        return { monitor: { ...monitor, urls }, nextCheckAt: await nextCheck(monitor) };
      });
      if ('refused' in outcome) {
        await accounts.holdings.release(principal, 'monitors', monitorId);
        throw outcome.refused;
      }
      return outcome;
    },

    async list(principal: Principal, query: { limit: number; cursor?: string }): Promise<Listed<ShownMonitor>> {
      const after = decode(null, query.cursor);
      const found = await store.monitors
        .find({ account_id: principal.accountId, status: { $ne: 'deleted' }, ...(after ? { _id: { $lt: after } } : {}) })
        .sort({ _id: -1 })
        .limit(query.limit + 1)
        .toArray();
      const items = found.slice(0, query.limit);
      return { items: await shownMonitors(store, items), nextCursor: found.length > query.limit ? idCursor.encode(null, (items.at(-1) as MonitorDoc)._id) : null };
    },

    async get(principal: Principal, monitorId: string): Promise<{ monitor: ShownMonitor; nextCheckAt: Date | null }> {
      const monitor = await own(principal, monitorId);
      return { monitor: await shownMonitor(store, monitor), nextCheckAt: monitor.status === 'active' ? await nextCheck(monitor) : null };
    },

    async update(principal: Principal, monitorId: string, body: MonitorBody): Promise<{ monitor: ShownMonitor; nextCheckAt: Date | null }> {
      const monitor = await own(principal, monitorId);
      const schedule: MonitorSchedule | undefined = body.schedule ? parseMonitorSchedule(body.schedule, minIntervalOf(deps.config, principal)) : undefined;
      const set: Partial<MonitorDoc> = { updated_at: new Date() };
      if (body.name !== undefined) set.name = body.name;
      if (body.urls !== undefined || body.crawl !== undefined) {
        const { urls, ...watching } = await watched(principal, body, await urlsHeld(principal, monitorId));
        Object.assign(set, watching);
        // A URL taken out of the list is not announced as removed; a new crawl starts a new baseline.
        if (urls) {
          const kept = new Set(urls);
          await writeList(store, monitorId, 'urls', urls);
          await writeList(store, monitorId, 'last', (await readList(store, monitorId, 'last')).filter((url) => kept.has(url)));
        } else {
          await writeList(store, monitorId, 'last', []);
          set.baseline_at = null;
        }
      }
      if (body.css_extractor !== undefined || body.main_content !== undefined || body.extract !== undefined) {
        set.outputs = outputsFor(principal, body);
        // The last versions' text is the whole page's or the main content's: the next check is a baseline again, so the switch is not announced as a change.
        if ((set.outputs.main_content === true) !== (monitor.outputs.main_content === true)) set.baseline_at = null;
      }
      if (body.webhook !== undefined) set.webhook = body.webhook ? await checkWebhook(deps, principal, body.webhook) : null;
      if (schedule) {
        await schedules.update(monitorId, schedule).catch((error: unknown) => {
          throw scheduleRefusal(error);
        });
        set.schedule = schedule;
      }
      await store.monitors.updateOne({ _id: monitorId }, { $set: set });
      const updated = await shownMonitor(store, { ...monitor, ...set });
      return { monitor: updated, nextCheckAt: updated.status === 'active' ? await nextCheck(updated) : null };
    },

    async remove(principal: Principal, monitorId: string): Promise<void> {
      await own(principal, monitorId);
      // Marked first: a check that starts meanwhile finds the monitor gone and announces nothing.
      await store.monitors.updateOne({ _id: monitorId }, { $set: { status: 'deleted', updated_at: new Date() } });
      await markListsDeleted(store, monitorId);
      await schedules.remove(monitorId);
      await accounts.holdings.release(principal, 'monitors', monitorId);
    },

    async setPaused(principal: Principal, monitorId: string, paused: boolean): Promise<{ monitor: ShownMonitor; nextCheckAt: Date | null }> {
      const monitor = await own(principal, monitorId);
      await schedules.setPaused(monitorId, paused);
      const status = paused ? 'paused' : 'active';
      await store.monitors.updateOne({ _id: monitorId }, { $set: { status, updated_at: new Date() } });
      const updated = await shownMonitor(store, { ...monitor, status });
      return { monitor: updated, nextCheckAt: paused ? null : await nextCheck(updated) };
    },

    /** Starts a check now (beside the schedule; one that would overlap a running check is recorded as skipped). */
    async checkNow(principal: Principal, monitorId: string): Promise<{ checkId: string }> {
      const monitor = await own(principal, monitorId);
      const checkId = newId('chk');
      try {
        await deps.temporal.client.workflow.start(MONITOR_CHECK_WORKFLOW_TYPE, {
          taskQueue: deps.config.temporalTaskQueue,
          workflowId: monitorManualCheckId(monitor._id, checkId),
          args: [{ monitorId: monitor._id, trigger: 'manual', checkId }],
          typedSearchAttributes: [
            { key: ACCOUNT_ATTRIBUTE, value: principal.accountId },
            { key: JOB_ATTRIBUTE, value: monitor._id },
            { key: STATUS_ATTRIBUTE, value: 'pending' },
          ],
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
      return { checkId };
    },

    async checks(principal: Principal, monitorId: string, query: { limit: number; cursor?: string }): Promise<Listed<CheckDoc>> {
      await own(principal, monitorId);
      const after = decode(monitorId, query.cursor);
      const found = await store.checks
        .find({ monitor_id: monitorId, ...(after ? { _id: { $lt: after } } : {}) })
        .sort({ _id: -1 })
        .limit(query.limit + 1)
        .toArray();
      const items = found.slice(0, query.limit);
      return { items, nextCursor: found.length > query.limit ? idCursor.encode(monitorId, (items.at(-1) as CheckDoc)._id) : null };
    },

    /** A check with the pages that changed, appeared, went or failed (those found the same are counted only). */
    async check(principal: Principal, monitorId: string, checkId: string): Promise<{ check: CheckDoc; changes: PageDoc[] }> {
      const monitor = await own(principal, monitorId);
      const check = (await store.checks.findOne({ _id: checkId, monitor_id: monitorId })) ?? (await startedCheck(monitor, checkId));
      if (!check) throw problem('not_found', `No check ${checkId.slice(0, 64)} of monitor ${monitorId}.`);
      const changes = (await storedCheck(store, checkId)).pages.filter((page) => page.change !== 'same').sort(byUrl).slice(0, 1000);
      return { check, changes };
    },
  };
}

export type MonitorCommands = ReturnType<typeof createMonitorCommands>;

/** Of the monitors asked about: `live` unless deleted; one with no record is left out (its creation may be on the way). */
async function monitorStates(store: MonitorStore, ids: string[]): Promise<Map<string, 'live' | 'ended'>> {
  const found = await store.monitors.find({ _id: { $in: ids } }, { projection: { status: 1 } }).toArray();
  return new Map(found.map((monitor) => [monitor._id, monitor.status === 'deleted' ? 'ended' : 'live']));
}
