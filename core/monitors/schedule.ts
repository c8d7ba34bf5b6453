/**
 * A monitor's schedule: `{every, unit}` or `{cron, timezone}`, checked against the plan's shortest
 * interval, and its Temporal Schedule `monitor-schedule-<monitor_id>`, whose every fire starts a check
 * (`monitorCheckWorkflow`). Overlapping fires are all started: the check itself sees the one still
 * running and records itself as skipped (check.ts), so a skip is visible in the monitor's checks.
 */
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { msToTs, tsToMs } from '@temporalio/common/lib/time';
import type { Config } from '../../base/config';
import { problem } from '../../base/errors';
import { ACCOUNT_ATTRIBUTE, JOB_ATTRIBUTE, MONITOR_CHECK_WORKFLOW_TYPE, STATUS_ATTRIBUTE, monitorScheduledCheckId } from '../jobs/workflow-names';
import type { Principal } from '../accounts';

export interface MonitorSchedule {
  every?: number;
  unit?: 'second' | 'minute' | 'hour' | 'day';
  cron?: string;
  timezone?: string;
}

const UNIT_SECONDS = { second: 1, minute: 60, hour: 3_600, day: 86_400 } as const;

export const MONITOR_SCHEDULE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  description: '`{every, unit}` (unit minute, hour or day; `second` where the plan’s minimum allows it) or `{cron, timezone}` (five fields).',
  properties: {
    every: { type: 'integer', minimum: 1, maximum: 100_000 },
    unit: { type: 'string', enum: ['second', 'minute', 'hour', 'day'] },
    cron: { type: 'string', minLength: 9, maxLength: 120, pattern: '^[0-9*/,\\- ]+$', description: 'Five fields of numbers, `*`, ranges, lists and steps (no names): minute, hour, day of month, month, day of week.' },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

/** The plan's shortest interval between checks, in seconds. */
export const minIntervalOf = (config: Pick<Config, 'monitorMinIntervalSeconds'>, principal: Pick<Principal, 'plan'>): number =>
  principal.plan.limits.monitorIntervalSeconds ?? config.monitorMinIntervalSeconds;

const invalid = (parameter: string, detail: string, extra: Record<string, unknown> = {}): never => {
  throw problem('invalid_argument', detail, { members: { parameter, ...extra } });
};

/** The canonical schedule, or 400 naming the field (and the plan's minimum when it is too short). */
export function parseMonitorSchedule(body: MonitorSchedule, minIntervalSeconds: number): MonitorSchedule {
  const rate = body.every !== undefined || body.unit !== undefined;
  if (rate === (body.cron !== undefined)) return invalid('schedule', 'A schedule is `{every, unit}` or `{cron, timezone}`.');
  if (rate) {
    if (body.every === undefined || body.unit === undefined) return invalid('schedule', '`every` and `unit` go together.');
    if (body.timezone !== undefined) return invalid('schedule.timezone', '`timezone` goes with `cron` only.');
    const seconds = body.every * UNIT_SECONDS[body.unit];
    if (seconds < minIntervalSeconds) tooShort(minIntervalSeconds);
    return { every: body.every, unit: body.unit };
  }
  const cron = (body.cron as string).trim().split(/ +/);
  if (cron.length !== 5 || !cron.every((field, index) => cronFieldOk(field, CRON_RANGES[index] as [number, number]))) {
    return invalid('schedule.cron', '`cron` has five fields of numbers in range, `*`, ranges, lists and steps: minute, hour, day of month, month, day of week.');
  }
  const timezone = body.timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    return invalid('schedule.timezone', `"${timezone}" is not an IANA time zone.`);
  }
  // A cron fires at most once a minute; a plan whose minimum is longer needs a fixed minute.
  if (minIntervalSeconds > 60 && !/^\d{1,2}$/.test(cron[0] as string)) tooShort(minIntervalSeconds);
  return { cron: cron.join(' '), timezone };
}

/** Each cron field's bounds: minute, hour, day of month, month, day of week (0 and 7 are Sunday). */
const CRON_RANGES: ReadonlyArray<[number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];
const CRON_PART = /^(\*|(\d{1,2})(?:-(\d{1,2}))?)(?:\/(\d{1,2}))?$/;

function cronFieldOk(field: string, [low, high]: [number, number]): boolean {
  return field.split(',').every((part) => {
    const match = CRON_PART.exec(part);
    if (!match) return false;
    const [, , from, to, step] = match;
    if (step !== undefined && Number(step) < 1) return false;
    if (from === undefined) return true;
    const start = Number(from);
    const end = to === undefined ? start : Number(to);
    return start >= low && end <= high && start <= end;
  });
}

function tooShort(minIntervalSeconds: number): never {
  return invalid('schedule', `The plan's monitors are checked at most every ${minIntervalSeconds} seconds (limit monitor_interval_seconds).`, { minimum_interval_seconds: minIntervalSeconds });
}

/** Seconds between two checks of a rate schedule (a cron's is not fixed: undefined). */
export const intervalSeconds = (schedule: MonitorSchedule): number | undefined =>
  schedule.every !== undefined && schedule.unit ? schedule.every * UNIT_SECONDS[schedule.unit] : undefined;

export const monitorScheduleId = (monitorId: string): string => `monitor-schedule-${monitorId}`;

function specOf(schedule: MonitorSchedule): ScheduleOptions['spec'] {
  const every = intervalSeconds(schedule);
  if (every !== undefined) return { intervals: [{ every: `${every}s` }] };
  return { cronExpressions: [schedule.cron as string], timezone: schedule.timezone ?? 'UTC' };
}

export function createMonitorSchedules(client: Client, taskQueue: string) {
  const handle = (monitorId: string) => client.schedule.getHandle(monitorScheduleId(monitorId));
  return {
    async create(monitorId: string, accountId: string, schedule: MonitorSchedule, paused: boolean): Promise<void> {
      const options: ScheduleOptions = {
        scheduleId: monitorScheduleId(monitorId),
        spec: specOf(schedule),
        action: {
          type: 'startWorkflow',
          workflowType: MONITOR_CHECK_WORKFLOW_TYPE,
          taskQueue,
          args: [{ monitorId, trigger: 'scheduled' }],
          workflowId: monitorScheduledCheckId(monitorId),
          typedSearchAttributes: [
            { key: ACCOUNT_ATTRIBUTE, value: accountId },
            { key: JOB_ATTRIBUTE, value: monitorId },
            { key: STATUS_ATTRIBUTE, value: 'pending' },
          ],
        },
        // Every fire starts its check; one that finds another running records itself skipped.
        policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: '1 minute' },
        state: { paused, note: `Monitor ${monitorId} of account ${accountId}` },
      };
      await client.schedule.create(options);
    },

    async update(monitorId: string, schedule: MonitorSchedule): Promise<void> {
      await handle(monitorId).update((previous) => ({ ...previous, spec: specOf(schedule) }));
    },

    async setPaused(monitorId: string, paused: boolean): Promise<void> {
      if (paused) await handle(monitorId).pause('paused through the API');
      else await handle(monitorId).unpause('resumed through the API');
    },

    async remove(monitorId: string): Promise<void> {
      try {
        await handle(monitorId).delete();
      } catch (error) {
        if (!(error instanceof ScheduleNotFoundError)) throw error;
      }
    },

    /** When the schedule fires next (also while paused: what would fire), or null. */
    async nextFire(monitorId: string, schedule: MonitorSchedule, now = new Date()): Promise<Date | null> {
      const described = await handle(monitorId).describe();
      const next = described.info.nextActionTimes[0];
      if (next) return next;
      const window = (intervalSeconds(schedule) ?? 31 * 86_400) * 2;
      const { startTime } = await client.workflowService.listScheduleMatchingTimes({
        namespace: client.options.namespace,
        scheduleId: monitorScheduleId(monitorId),
        startTime: msToTs(now.getTime()),
        endTime: msToTs(now.getTime() + window * 1000),
      });
      const first = startTime?.[0];
      return first ? new Date(tsToMs(first)) : null;
    },
  };
}

export type MonitorSchedules = ReturnType<typeof createMonitorSchedules>;
