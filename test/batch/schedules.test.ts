import { expect } from 'chai';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { batchScheduleId } from '../../core/batch/schedules/temporal';
import { connectTemporal, type TemporalHandle } from '../../base/temporal';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually } from '../helpers/stack';
import { accountsHandle, batchAccount, batchRequest, creditsUsed, startTargetSite, urls, type Json } from './helpers';

const EVERY_2S = { rate: { every: 2, unit: 'second' } };

describe('Batch: scheduled jobs', function () {
  this.timeout(180_000);
  let site: Awaited<ReturnType<typeof startTargetSite>>;
  let receiver: WebhookReceiver;
  let temporal: TemporalHandle;
  before(async () => {
    site = await startTargetSite({ slowMs: 1_500 });
    receiver = await startWebhookReceiver();
    temporal = connectTemporal((await accountsHandle()).config);
  });
  after(async () => {
    await site.close();
    await receiver.close();
    await temporal.close();
  });

  const runsOf = async (key: string, job: string): Promise<Json[]> => ((await batchRequest(key, 'GET', `/v1/jobs/${job}/runs?limit=100`)).body.runs as Json[]).slice().reverse();
  const ended = (runs: Json[]): Json[] => runs.filter((run) => ['completed', 'failed', 'stopped'].includes(run.status as string));
  /**
   * Another scheduled job on the same interval, on its own account: its fires are the events that say
   * the schedules have had their turns (a paused or deleted one would have fired meanwhile).
   */
  const startClock = async () => {
    const clock = await batchAccount();
    const made = await batchRequest(clock.key, 'POST', '/v1/jobs', { type: 'scheduled', schedule: EVERY_2S, tasks: urls(site, 'ok', 1, 900) });
    const job = made.body.job_id as string;
    return {
      /** Resolves once the clock's schedule has fired `count` more runs, all ended. */
      async fires(count: number): Promise<void> {
        const from = (await runsOf(clock.key, job)).length;
        await eventually(async () => ended(await runsOf(clock.key, job)).length >= from + count, 150, 200);
      },
      stop: async () => void (await batchRequest(clock.key, 'DELETE', `/v1/jobs/${job}`)),
    };
  };
  const eventsOf = (job: string): Json[] =>
    receiver.deliveries.map((delivery) => JSON.parse(delivery.body.toString()) as Json).filter((event) => event.job_id === job);

  it('fires runs of the job’s tasks on a short interval, each delivered; paused fires none; deleted stops its schedule', async () => {
    const account = await batchAccount();
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
      type: 'scheduled',
      schedule: EVERY_2S,
      tasks: urls(site, 'ok', 3),
      webhook: { url: receiver.url(`/scheduled-${account.accountId}`), signature: false },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.latest_run).to.equal(null);
    const job = created.body.job_id as string;
    const view = (await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).body;
    expect(view).to.deep.include({ type: 'scheduled', status: 'closed', schedule: EVERY_2S, schedule_state: 'active' });
    expect(Date.parse(view.next_scheduled_run as string)).to.be.greaterThan(Date.now() - 2_000);

    // The schedule is a Temporal Schedule an operator sees in the Web UI, overlapping fires skipped.
    const described = await temporal.client.schedule.getHandle(batchScheduleId(job)).describe();
    expect(described.action).to.include({ type: 'startWorkflow', workflowType: 'batchScheduledFireWorkflow' });
    expect(described.policies.overlap).to.equal(ScheduleOverlapPolicy.SKIP);

    await eventually(async () => ended(await runsOf(account.key, job)).length >= 2, 150, 200);
    const runs = ended(await runsOf(account.key, job));
    expect(runs.map((run) => run.run_sequence)).to.deep.equal(runs.map((_, index) => index + 1));
    for (const run of runs) {
      expect(run).to.include({ status: 'completed', trigger: 'scheduled' });
      expect(run.stats).to.deep.include({ total: 3, successful: 3 });
    }
    await eventually(async () => runs.every((run) => eventsOf(job).some((event) => event.run_id === run.run_id && event.event_type === 'run.completed')), 100, 200);
    // Each run keeps its delivery's outcome.
    await eventually(async () => ended(await runsOf(account.key, job)).slice(0, 2).every((run) => run.webhook_outcome === 'delivered'), 50, 200);

    const paused = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/schedule/state`, { schedule_state: 'paused' });
    expect(paused.status).to.equal(200);
    expect(paused.body).to.include({ schedule_state: 'paused' });
    expect(paused.body.next_scheduled_run, 'what would fire next').to.be.a('string');
    // A fire already under way finishes; after that, none comes while paused.
    await eventually(async () => (await runsOf(account.key, job)).every((run) => ['completed', 'failed'].includes(run.status as string)), 100, 200);
    const atPause = (await runsOf(account.key, job)).length;
    const clock = await startClock();
    await clock.fires(3);
    expect((await runsOf(account.key, job)).length, 'no fire while paused').to.equal(atPause);

    const resumed = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/schedule/state`, { schedule_state: 'active' });
    expect(resumed.body).to.include({ schedule_state: 'active' });
    await eventually(async () => ended(await runsOf(account.key, job)).length > atPause, 100, 200);

    expect((await batchRequest(account.key, 'DELETE', `/v1/jobs/${job}`)).status).to.equal(204);
    const error = await temporal.client.schedule
      .getHandle(batchScheduleId(job))
      .describe()
      .catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(ScheduleNotFoundError);
    const credits = await creditsUsed(account.accountId);
    const deliveries = eventsOf(job).length;
    await clock.fires(2);
    await clock.stop();
    expect(await creditsUsed(account.accountId), 'no fire after the delete').to.equal(credits);
    expect(eventsOf(job).length).to.be.at.most(deliveries + 1);
  });

  it('skips a fire while the last fire’s run still runs', async () => {
    const account = await batchAccount({ concurrency: 1 });
    // Three slow tasks one at a time take about 4.5 s, more than two intervals.
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'scheduled', schedule: EVERY_2S, tasks: urls(site, 'slow', 3) });
    const job = created.body.job_id as string;
    await eventually(async () => ended(await runsOf(account.key, job)).length >= 2, 150, 200);
    await batchRequest(account.key, 'POST', `/v1/jobs/${job}/schedule/state`, { schedule_state: 'paused' });
    const runs = ended(await runsOf(account.key, job));
    const [first, second] = runs as [Json, Json];
    const firstRecord = await (await accountsHandle()).db.db.collection('batch_runs').findOne({ _id: first.run_id as never });
    expect(Date.parse(second.created_at as string), 'the second run started after the first ended').to.be.at.least((firstRecord?.ended_at as Date).getTime());
    await batchRequest(account.key, 'DELETE', `/v1/jobs/${job}`);
  });

  it('fires by hand through rerun, updates its schedule, and maps calendars and one-shot times to the time zone', async () => {
    const account = await batchAccount();
    const daily = { calendar: { times_of_day: ['18:00', '09:00'], cadence: { weekly: { days: ['wed', 'mon'] } } }, timezone: 'Europe/Berlin' };
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'scheduled', schedule: daily, tasks: urls(site, 'ok', 2) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const job = created.body.job_id as string;
    const view = (await batchRequest(account.key, 'GET', `/v1/jobs/${job}`)).body;
    expect(view.schedule, 'canonical: sorted, days in week order').to.deep.equal({ calendar: { times_of_day: ['09:00', '18:00'], cadence: { weekly: { days: ['mon', 'wed'] } } }, timezone: 'Europe/Berlin' });
    const next = new Date(view.next_scheduled_run as string);
    const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next);
    expect(berlin).to.match(/^(Mon|Wed) (09|18):00$/);
    const spec = (await temporal.client.schedule.getHandle(batchScheduleId(job)).describe()).spec;
    expect(spec.timezone).to.equal('Europe/Berlin');

    // Not fired yet: a rerun is the first, manual fire.
    const fired = await batchRequest(account.key, 'POST', `/v1/jobs/${job}/rerun`);
    expect(fired.status, JSON.stringify(fired.body)).to.equal(202);
    expect(fired.body.latest_run).to.include({ run_sequence: 1, trigger: 'manual' });
    await eventually(async () => ended(await runsOf(account.key, job)).length === 1, 100, 200);

    const at = new Date(Date.now() + 3 * 86_400_000);
    const wall = new Intl.DateTimeFormat('sv-SE', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .format(at)
      .replace(' ', 'T');
    const updated = await batchRequest(account.key, 'PUT', `/v1/jobs/${job}/schedule`, { at: wall, timezone: 'America/New_York' });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect(updated.body.schedule).to.deep.equal({ at: wall, timezone: 'America/New_York' });
    expect(Math.abs(Date.parse(updated.body.next_scheduled_run as string) - Math.floor(at.getTime() / 1000) * 1000)).to.be.below(1_000);
    await batchRequest(account.key, 'DELETE', `/v1/jobs/${job}`);
  });

  it('records a fire the account cannot pay for as a failed run once, and tells the webhook', async () => {
    const account = await batchAccount({ credits: 4 });
    const created = await batchRequest(account.key, 'POST', '/v1/jobs', {
      type: 'scheduled',
      schedule: EVERY_2S,
      tasks: urls(site, 'ok', 3),
      webhook: { url: receiver.url(`/poor-${account.accountId}`), signature: false },
    });
    const job = created.body.job_id as string;
    await eventually(async () => (await runsOf(account.key, job)).filter((run) => run.status === 'failed').length >= 2, 150, 200);
    // A refusal is recorded once per change of state: later fires refused for the same reason add no run.
    const actions = async () => (await temporal.client.schedule.getHandle(batchScheduleId(job)).describe()).info.numActionsTaken;
    const fired = async (more: number) => {
      const from = await actions();
      await eventually(async () => (await actions()) >= from + more, 150, 200);
    };
    await fired(2);
    const settled = (await runsOf(account.key, job)).length;
    await fired(3);
    expect((await runsOf(account.key, job)).length, 'runs after more refused fires').to.equal(settled);
    await batchRequest(account.key, 'POST', `/v1/jobs/${job}/schedule/state`, { schedule_state: 'paused' });
    const failed = (await runsOf(account.key, job)).filter((run) => run.status === 'failed');
    for (const run of failed) expect(run).to.include({ failure_reason: 'insufficient_credits', trigger: 'scheduled' });
    expect(await creditsUsed(account.accountId)).to.equal(4);
    await eventually(async () => failed.every((run) => eventsOf(job).some((event) => event.run_id === run.run_id && event.event_type === 'run.failed' && event.failure_reason === 'insufficient_credits')), 100, 200);
    await batchRequest(account.key, 'DELETE', `/v1/jobs/${job}`);
  });

  it('refuses schedules it cannot keep, naming the field, and creates nothing', async () => {
    const account = await batchAccount();
    const tasks = urls(site, 'ok', 1);
    const refused = async (body: Json, parameter: string | RegExp) => {
      const answer = await batchRequest(account.key, 'POST', '/v1/jobs', { type: 'scheduled', tasks, ...body });
      expect(answer.status, JSON.stringify(body)).to.equal(400);
      expect(answer.body.code).to.equal('invalid_argument');
      expect(`${String(answer.body.parameter ?? '')} ${String(answer.body.detail)}`).to.match(typeof parameter === 'string' ? new RegExp(parameter.replace('.', '\\.')) : parameter);
    };
    await refused({}, 'schedule');
    await refused({ schedule: { rate: { every: 1, unit: 'minute' }, at: '2030-01-01T00:00:00', timezone: 'UTC' } }, 'schedule');
    await refused({ schedule: { rate: { every: 1, unit: 'second' } } }, 'schedule.rate');
    await refused({ schedule: { calendar: { times_of_day: ['09:00'], cadence: { daily: {} } } } }, 'schedule.timezone');
    await refused({ schedule: { calendar: { times_of_day: ['09:00'], cadence: { daily: {} } }, timezone: 'Mars/Olympus' } }, 'schedule.timezone');
    await refused({ schedule: { calendar: { times_of_day: ['09:30'], cadence: { daily: {} } }, timezone: 'UTC' } }, /times_of_day|09:30|pattern/);
    await refused({ schedule: { at: '2020-01-01T09:00:00', timezone: 'UTC' } }, 'schedule.at');
    await refused({ schedule: { at: '2031-01-01T09:00:00Z', timezone: 'UTC' } }, 'schedule.at');
    await refused({ status: 'open', schedule: EVERY_2S }, 'status');
    const jobs = (await batchRequest(account.key, 'GET', '/v1/jobs?type=scheduled')).body.jobs as Json[];
    expect(jobs).to.deep.equal([]);

    const regular = await batchRequest(account.key, 'POST', '/v1/jobs', { tasks });
    const notScheduled = await batchRequest(account.key, 'PUT', `/v1/jobs/${regular.body.job_id as string}/schedule`, EVERY_2S);
    expect(notScheduled.status).to.equal(409);
    const state = await batchRequest(account.key, 'POST', `/v1/jobs/${regular.body.job_id as string}/schedule/state`, { schedule_state: 'sleeping' });
    expect(state.status).to.equal(400);
  });
});
