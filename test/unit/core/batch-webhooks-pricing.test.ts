import { expect } from 'chai';
import { createLinks } from '../../../core/batch/links';
import { parseSchedule, scheduleSpec } from '../../../core/batch/schedules/parse';
import { isApiError } from '../../../base/errors';
import { configurationOf, costOf } from '../../../core/pricing';
import { signatureHeader, verifySignature } from '../../../core/webhooks/signature';

describe('pricing', () => {
  it('prices the four configurations 1, 5, 10 and 25 credits', () => {
    expect(costOf({ jsRender: false, premiumProxy: false })).to.equal(1);
    expect(costOf({ jsRender: true, premiumProxy: false })).to.equal(5);
    expect(costOf({ jsRender: false, premiumProxy: true })).to.equal(10);
    expect(costOf({ jsRender: true, premiumProxy: true })).to.equal(25);
    expect(configurationOf({ jsRender: true, premiumProxy: true }).id).to.equal('js_render_premium_proxy');
  });
});

describe('webhook signatures', () => {
  const key = { kid: 'k1', secret: Buffer.from('c2VjcmV0LWJ5dGVzLW9mLXRoZS1rZXk=', 'base64') };
  const body = Buffer.from('{"type":"run.completed"}');
  const secrets = new Map([[key.kid, key.secret]]);

  it('signs `<t>.` and the exact body bytes with HMAC-SHA256, and a receiver verifies it', () => {
    const header = signatureHeader(key, body, 1_800_000_000.7);
    expect(header).to.match(/^t=1800000000,v1=[0-9a-f]{64},kid=k1$/);
    expect(verifySignature(header, body, secrets, 1_800_000_100)).to.equal(true);
  });

  it('refuses another body, an old timestamp, an unknown kid and a malformed header', () => {
    const header = signatureHeader(key, body, 1_800_000_000);
    expect(verifySignature(header, Buffer.from('{"type": "run.completed"}'), secrets, 1_800_000_000)).to.equal(false);
    expect(verifySignature(header, body, secrets, 1_800_000_301)).to.equal(false);
    expect(verifySignature(header.replace('kid=k1', 'kid=k2'), body, secrets, 1_800_000_000)).to.equal(false);
    expect(verifySignature('t=1800000000,v1=zz,kid=k1', body, secrets, 1_800_000_000)).to.equal(false);
  });
});

describe('Batch capability links', () => {
  const links = createLinks(Buffer.alloc(32, 9));
  const now = Date.parse('2026-11-01T00:00:00Z');

  it('answers the claim of a valid link of its kind until it expires', () => {
    const token = links.sign('result', 'run_1.42', now + 60_000);
    expect(links.verify(token, 'result', now)).to.deep.equal({ kind: 'result', id: 'run_1.42', expiresAt: now + 60_000 });
    expect(links.verify(token, 'export', now), 'another kind').to.equal(undefined);
    expect(links.verify(token, 'result', now + 60_000), 'expired').to.equal(undefined);
  });

  it('refuses a link signed with another key, or changed in any character', () => {
    const token = links.sign('export', 'exp_1', now + 60_000);
    expect(createLinks(Buffer.alloc(32, 8)).verify(token, 'export', now)).to.equal(undefined);
    const [payload, mac] = token.split('.') as [string, string];
    const forged = `${Buffer.from('export.exp_2.' + String(now + 60_000)).toString('base64url')}.${mac}`;
    expect(links.verify(forged, 'export', now)).to.equal(undefined);
    expect(links.verify(`${payload}.${mac}x`, 'export', now)).to.equal(undefined);
  });
});

describe('Batch schedules', () => {
  const now = Date.parse('2026-11-01T00:00:00Z');
  const refusal = (call: () => unknown): string | undefined => {
    try {
      call();
    } catch (error) {
      if (isApiError(error)) return String(error.members.parameter);
      throw error;
    }
    return undefined;
  };

  it('canonicalizes rate, at and calendar schedules and turns them into Temporal specs', () => {
    expect(parseSchedule({ rate: { every: 5, unit: 'minute' } }, { minIntervalSeconds: 60, now })).to.deep.equal({ rate: { every: 5, unit: 'minute' } });
    expect(scheduleSpec({ rate: { every: 5, unit: 'minute' } }).spec.intervals).to.deep.equal([{ every: '300s' }]);
    const at = parseSchedule({ at: '2026-12-01 09:00', timezone: 'Europe/Berlin' }, { minIntervalSeconds: 60, now });
    expect(at).to.deep.equal({ at: '2026-12-01T09:00:00', timezone: 'Europe/Berlin' });
    expect(scheduleSpec(at).remainingActions).to.equal(1);
    const calendar = parseSchedule(
      { calendar: { times_of_day: ['18:00', '06:00', '06:00'], cadence: { weekly: { days: ['fri', 'mon'] } } }, timezone: 'UTC' },
      { minIntervalSeconds: 60, now },
    );
    expect(calendar.calendar).to.deep.equal({ times_of_day: ['06:00', '18:00'], cadence: { weekly: { days: ['mon', 'fri'] } } });
    expect(scheduleSpec(calendar).spec.calendars?.[0]).to.deep.include({ hour: [6, 18], dayOfWeek: ['MONDAY', 'FRIDAY'] });
  });

  it('names the field of a schedule it refuses', () => {
    expect(refusal(() => parseSchedule({ rate: { every: 10, unit: 'second' } }, { minIntervalSeconds: 60, now }))).to.equal('schedule.rate');
    expect(refusal(() => parseSchedule({ at: '2026-10-01T09:00:00', timezone: 'UTC' }, { minIntervalSeconds: 60, now }))).to.equal('schedule.at');
    expect(refusal(() => parseSchedule({ at: '2026-12-01T09:00:00', timezone: 'Mars/Olympus' }, { minIntervalSeconds: 60, now }))).to.equal('schedule.timezone');
    expect(refusal(() => parseSchedule({ at: '2026-12-01T09:00:00' }, { minIntervalSeconds: 60, now }))).to.equal('schedule.timezone');
    expect(refusal(() => parseSchedule({}, { minIntervalSeconds: 60, now }))).to.equal('schedule');
  });
});
