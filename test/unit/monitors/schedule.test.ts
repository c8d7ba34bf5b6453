import { expect } from 'chai';
import { loadConfig } from '../../../base/config';
import { isApiError } from '../../../base/errors';
import { derivedTimedId } from '../../../base/ids';
import { PlanCatalogue } from '../../../core/accounts/plans';
import { intervalSeconds, minIntervalOf, parseMonitorSchedule, type MonitorSchedule } from '../../../core/monitors/schedule';

const refusal = (schedule: MonitorSchedule, minimum: number): Record<string, unknown> => {
  try {
    parseMonitorSchedule(schedule, minimum);
  } catch (error) {
    if (isApiError(error)) return { code: error.code, detail: error.detail, ...error.members };
    throw error;
  }
  throw new Error('accepted');
};

describe('monitor schedules', () => {
  it('takes {every, unit} at or above the minimum and refuses a shorter one naming the minimum', () => {
    expect(parseMonitorSchedule({ every: 15, unit: 'minute' }, 900)).to.deep.equal({ every: 15, unit: 'minute' });
    expect(intervalSeconds({ every: 2, unit: 'hour' })).to.equal(7_200);
    const short = refusal({ every: 14, unit: 'minute' }, 900);
    expect(short).to.include({ code: 'invalid_argument', minimum_interval_seconds: 900, parameter: 'schedule' });
    expect(short.detail).to.include('900 seconds');
    expect(refusal({ every: 59, unit: 'second' }, 60)).to.include({ minimum_interval_seconds: 60 });
  });

  it('takes a five-field cron with a time zone, and refuses what is not one', () => {
    expect(parseMonitorSchedule({ cron: '0  9 * * 1-5', timezone: 'Europe/Berlin' }, 900)).to.deep.equal({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
    expect(parseMonitorSchedule({ cron: '*/5 * * * *' }, 60)).to.deep.equal({ cron: '*/5 * * * *', timezone: 'UTC' });
    // Every five minutes is more often than a plan with a 15-minute minimum allows.
    expect(refusal({ cron: '*/5 * * * *' }, 900)).to.include({ minimum_interval_seconds: 900 });
    expect(refusal({ cron: '0 9 * *' }, 60)).to.include({ parameter: 'schedule.cron' });
    for (const cron of ['60 * * * *', '0 24 * * *', '0 9 0 * *', '0 9 * 13 *', '0 9 * * 8', '5-1 * * * *', '*/0 * * * *', '1-2-3 * * * *', ', * * * *']) {
      expect(refusal({ cron }, 60), cron).to.include({ parameter: 'schedule.cron' });
    }
    expect(parseMonitorSchedule({ cron: '0,30 8-18/2 1-31 1,6,12 0-7' }, 60)).to.deep.equal({ cron: '0,30 8-18/2 1-31 1,6,12 0-7', timezone: 'UTC' });
    expect(refusal({ cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 60)).to.include({ parameter: 'schedule.timezone' });
    expect(refusal({ every: 1, unit: 'day', cron: '0 9 * * *' }, 60)).to.include({ parameter: 'schedule' });
    expect(refusal({ every: 1 }, 60)).to.include({ parameter: 'schedule' });
    expect(refusal({ every: 1, unit: 'day', timezone: 'UTC' }, 60)).to.include({ parameter: 'schedule.timezone' });
  });

  it('has by default a 15-minute minimum on the free plan and 1 minute on business, each settable', () => {
    const catalogue = (env: Record<string, string>) => {
      const config = loadConfig(env);
      const plans = new PlanCatalogue(config);
      return (name: string) => minIntervalOf(config, { plan: plans.resolve(name) });
    };
    const defaults = catalogue({});
    expect(defaults('free')).to.equal(900);
    expect(defaults('business')).to.equal(60);
    expect(defaults('free')).to.equal(loadConfig({}).monitorMinIntervalSeconds);
    expect(catalogue({ MONITOR_MIN_INTERVAL_SECONDS: '2' })('free')).to.equal(2);
    const limits = loadConfig({}).accountLimits;
    expect(limits).to.include({ monitors: 5, monitorUrls: 100 });
    const custom = loadConfig({ PLAN_LIMITS: 'business:monitor_interval_seconds=30:monitors=7:monitor_urls=70' });
    expect(new PlanCatalogue(custom).resolve('business').limits).to.include({ monitorIntervalSeconds: 30, monitors: 7, monitorUrls: 70 });
  });

  it('derives check ids that sort by time and repeat for the same fire', () => {
    const first = derivedTimedId('chk', 1_000, 'fire-a');
    expect(derivedTimedId('chk', 1_000, 'fire-a')).to.equal(first);
    expect(derivedTimedId('chk', 1_000, 'fire-b')).to.not.equal(first);
    expect(derivedTimedId('chk', 2_000, 'fire-a') > first).to.equal(true);
    expect(first).to.match(/^chk_[0-9a-z]{26}$/);
  });
});

describe('a scheduled check’s due time', () => {
  it('is read from the workflow id the Schedule gives each fire, else absent', async () => {
    const { nominalTime } = await import('../../../core/monitors/check');
    expect(nominalTime('monitor-check-mon_abc-2026-11-27T17:30:02Z')).to.equal(Date.parse('2026-11-27T17:30:02Z'));
    expect(nominalTime('monitor-check-mon_abc-now-chk_x')).to.equal(undefined);
    expect(nominalTime('monitor-check-mon_abc-2026-13-45T99:99:99Z')).to.equal(undefined);
  });
});
