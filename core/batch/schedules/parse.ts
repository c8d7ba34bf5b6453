/**
 * A scheduled job's schedule: the clients' body (`at`, `rate` or `calendar`, and `timezone`), its JSON
 * Schema, its checks and canonical form, and the Temporal Schedule spec it becomes (temporal.ts).
 */
import type { ScheduleSpec } from '@temporalio/client';
import { problem } from '../../../base/errors';

export interface JobSchedule {
  at?: string;
  rate?: { every: number; unit: 'second' | 'minute' | 'hour' | 'day' };
  calendar?: {
    times_of_day: string[];
    cadence: { daily?: Record<string, never>; weekly?: { days: string[] }; monthly?: { days: number[] } };
  };
  timezone?: string;
}

export type ScheduleState = 'active' | 'paused';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAY_NAMES = { mon: 'MONDAY', tue: 'TUESDAY', wed: 'WEDNESDAY', thu: 'THURSDAY', fri: 'FRIDAY', sat: 'SATURDAY', sun: 'SUNDAY' } as const;
const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;
/** The last year a schedule may fire in. */
const LAST_YEAR = 2099;
export const UNIT_SECONDS = { second: 1, minute: 60, hour: 3_600, day: 86_400 } as const;

/** The JSON Schema of the schedule body (the shape; `parseSchedule` checks what a schema cannot). */
export const SCHEDULE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    at: { type: 'string', minLength: 1, maxLength: 40, description: 'One fire at this wall-clock time, without offset (`timezone` says where).' },
    rate: {
      type: 'object',
      additionalProperties: false,
      required: ['every', 'unit'],
      properties: { every: { type: 'integer', minimum: 1, maximum: 1_000_000 }, unit: { type: 'string', enum: ['second', 'minute', 'hour', 'day'] } },
    },
    calendar: {
      type: 'object',
      additionalProperties: false,
      required: ['times_of_day', 'cadence'],
      properties: {
        times_of_day: { type: 'array', minItems: 1, maxItems: 24, items: { type: 'string', pattern: '^([01][0-9]|2[0-3]):00$' } },
        cadence: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          maxProperties: 1,
          properties: {
            daily: { type: 'object', additionalProperties: false },
            weekly: { type: 'object', additionalProperties: false, required: ['days'], properties: { days: { type: 'array', minItems: 1, maxItems: 7, items: { type: 'string', enum: [...DAYS] } } } },
            monthly: { type: 'object', additionalProperties: false, required: ['days'], properties: { days: { type: 'array', minItems: 1, maxItems: 31, items: { type: 'integer', minimum: 1, maximum: 31 } } } },
          },
        },
      },
    },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

const invalid = (parameter: string, detail: string): never => {
  throw problem('invalid_argument', detail, { members: { parameter } });
};

function checkTimezone(timezone: string | undefined, parameter: string): string {
  if (!timezone) return invalid(parameter, '`timezone` (an IANA name such as Europe/Berlin) is required with `at` and `calendar`.');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    return invalid(parameter, `"${timezone}" is not an IANA time zone.`);
  }
  return timezone;
}

/** The wall-clock parts of a tz-naive ISO timestamp, or undefined. */
export function wallClock(text: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return undefined;
  return { year, month, day, hour, minute, second };
}

/** The instant wall-clock `parts` in `timezone` denote (the first, on a day that repeats an hour). */
export function instantOf(parts: NonNullable<ReturnType<typeof wallClock>>, timezone: string): number {
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  const offsetAt = (instant: number): number => {
    const shown = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
      .formatToParts(new Date(instant))
      .reduce<Record<string, number>>((all, part) => (part.type === 'literal' ? all : { ...all, [part.type]: Number(part.value) }), {});
    return Date.UTC(shown.year ?? 0, (shown.month ?? 1) - 1, shown.day ?? 1, shown.hour ?? 0, shown.minute ?? 0, shown.second ?? 0) - instant;
  };
  const guess = asUtc - offsetAt(asUtc);
  return asUtc - offsetAt(guess);
}

/**
 * Checks a schedule body and answers its canonical form, or throws 400 `invalid_argument` naming the
 * field. `minIntervalSeconds` is the shortest `rate` the deployment allows; `now` rejects an `at` in the past.
 */
export function parseSchedule(body: JobSchedule, options: { minIntervalSeconds: number; now: number }): JobSchedule {
  const kinds = (['at', 'rate', 'calendar'] as const).filter((kind) => body[kind] !== undefined);
  if (kinds.length !== 1) invalid('schedule', 'A schedule has exactly one of `at`, `rate` and `calendar`.');
  if (body.rate) {
    const seconds = body.rate.every * UNIT_SECONDS[body.rate.unit];
    if (seconds < options.minIntervalSeconds) invalid('schedule.rate', `A rate fires at most every ${options.minIntervalSeconds} seconds.`);
    return { rate: { every: body.rate.every, unit: body.rate.unit } };
  }
  const timezone = checkTimezone(body.timezone, 'schedule.timezone');
  if (body.at !== undefined) {
    const parts = wallClock(body.at);
    if (!parts) return invalid('schedule.at', '`at` is a wall-clock time without offset, such as 2026-09-01T09:00:00 (`timezone` says where).');
    // The workflow service's calendars end with 2099: a later date is the caller's to fix, not a 500.
    if (parts.year > LAST_YEAR) invalid('schedule.at', `\`at\` must be in ${LAST_YEAR} or earlier.`);
    if (instantOf(parts, timezone) <= options.now) invalid('schedule.at', `${body.at} in ${timezone} has already passed.`);
    const pad = (value: number): string => String(value).padStart(2, '0');
    return { at: `${parts.year}-${pad(parts.month)}-${pad(parts.day)}T${pad(parts.hour)}:${pad(parts.minute)}:${pad(parts.second)}`, timezone };
  }
  const calendar = body.calendar as NonNullable<JobSchedule['calendar']>;
  const cadence = calendar.cadence;
  return {
    calendar: {
      times_of_day: [...new Set(calendar.times_of_day)].sort(),
      cadence: cadence.weekly
        ? { weekly: { days: DAYS.filter((day) => cadence.weekly?.days.includes(day)) } }
        : cadence.monthly
          ? { monthly: { days: [...new Set(cadence.monthly.days)].sort((a, b) => a - b) } }
          : { daily: {} },
    },
    timezone,
  };
}

/** The Temporal Schedule spec of a canonical schedule, and how many fires it has (one for `at`). */
export function scheduleSpec(schedule: JobSchedule): { spec: ScheduleSpec; remainingActions?: number } {
  if (schedule.rate) return { spec: { intervals: [{ every: `${schedule.rate.every * UNIT_SECONDS[schedule.rate.unit]}s` }] } };
  if (schedule.at) {
    const parts = wallClock(schedule.at) as NonNullable<ReturnType<typeof wallClock>>;
    return {
      spec: {
        calendars: [{ year: parts.year, month: MONTHS[parts.month - 1], dayOfMonth: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second }],
        ...(schedule.timezone ? { timezone: schedule.timezone } : {}),
      },
      remainingActions: 1,
    };
  }
  const calendar = schedule.calendar as NonNullable<JobSchedule['calendar']>;
  const hours = calendar.times_of_day.map((time) => Number(time.slice(0, 2)));
  const { weekly, monthly } = calendar.cadence;
  return {
    spec: {
      calendars: [
        {
          hour: hours,
          minute: 0,
          second: 0,
          ...(weekly ? { dayOfWeek: weekly.days.map((day) => DAY_NAMES[day as keyof typeof DAY_NAMES]) } : {}),
          ...(monthly ? { dayOfMonth: monthly.days } : {}),
        },
      ],
      ...(schedule.timezone ? { timezone: schedule.timezone } : {}),
    },
  };
}
