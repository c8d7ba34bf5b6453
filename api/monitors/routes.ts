/**
 * `/v1/monitors` (our extension, `X-API-Key`): monitors of URLs or of a crawl's pages on a schedule,
 * their checks and the changes found, announced by signed webhooks (core/monitors).
 */
import type { MonitorBody } from '../../core/monitors/inputs';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';
import type { ApiDeps } from '../deps';
import type { Route } from '../http/routes';
import { monitorIssues } from './issues';
import { presentChange, presentCheck, presentMonitor } from './present';
import { CHANGE, CHECK, CRAWL_BODY_422, CREATE_BODY, errors, json, MONITOR, PAGE_QUERY, PATCH_BODY } from './schemas';

const page = (name: string, item: Record<string, unknown>) => ({
  type: 'object',
  required: [name, 'next_cursor'],
  properties: { [name]: { type: 'array', items: item }, next_cursor: { type: ['string', 'null'], description: 'null on the last page.' } },
});

export function monitorRoutes(deps: ApiDeps): Route[] {
  const commands = deps.services.monitors;
  const common = { tags: ['Monitors'], security: securityOf('batch'), before: [authenticate(deps, 'batch')], issues: monitorIssues };
  const idOf = (params: Record<string, string | undefined>): string => params.monitor_id ?? '';
  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/monitors',
      operationId: 'createMonitor',
      summary: 'Create a monitor: its pages checked on a schedule, each change announced by webhook (our extension).',
      description:
        'A check fetches each page (billed like a Batch task: the pages fetched, once) and compares it with the last version kept by change tracking; noise (times, tokens, cache busters) does not count. The first check records the baseline and announces no page. Events: monitor.page.changed, monitor.page.new, monitor.page.removed (one per change), monitor.check.completed, monitor.check.failed.',
      body: CREATE_BODY,
      responses: {
        201: json('The monitor, with when it is checked first', MONITOR),
        ...errors,
        ...CRAWL_BODY_422,
        429: { description: 'The account holds its plan’s monitors or monitor_urls already (quota_exceeded, `limit` names it)' },
      },
      async handler(ctx, input) {
        await deps.readiness.requireWorker();
        const created = await commands.create(principalOf(ctx), input.body as MonitorBody);
        ctx.status = 201;
        ctx.set('Location', `/v1/monitors/${created.monitor._id}`);
        ctx.body = presentMonitor(created.monitor, created.nextCheckAt);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/monitors',
      operationId: 'listMonitors',
      summary: 'The account’s monitors, newest first (our extension).',
      query: PAGE_QUERY,
      responses: { 200: json('`{monitors, next_cursor}`', page('monitors', MONITOR)), ...errors },
      async handler(ctx, input) {
        const listed = await commands.list(principalOf(ctx), { limit: (input.query.limit as number | undefined) ?? 20, ...(input.query.cursor ? { cursor: input.query.cursor as string } : {}) });
        // The next check of each is the Schedule's to say: the list leaves it to GET one.
        ctx.body = { monitors: listed.items.map((monitor) => presentMonitor(monitor, null)), next_cursor: listed.nextCursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/monitors/{monitor_id}',
      operationId: 'getMonitor',
      summary: 'A monitor and when it is checked next (our extension).',
      responses: { 200: json('The monitor', MONITOR), ...errors },
      async handler(ctx, input) {
        const found = await commands.get(principalOf(ctx), idOf(input.params));
        ctx.body = presentMonitor(found.monitor, found.nextCheckAt);
      },
    },
    {
      ...common,
      method: 'PATCH',
      path: '/v1/monitors/{monitor_id}',
      operationId: 'updateMonitor',
      summary: 'Change a monitor’s name, pages, schedule, outputs or webhook (our extension).',
      body: PATCH_BODY,
      responses: { 200: json('The monitor', MONITOR), ...errors, ...CRAWL_BODY_422, 429: { description: 'More URLs than the plan’s monitor_urls (quota_exceeded)' } },
      async handler(ctx, input) {
        const updated = await commands.update(principalOf(ctx), idOf(input.params), input.body as MonitorBody);
        ctx.body = presentMonitor(updated.monitor, updated.nextCheckAt);
      },
    },
    {
      ...common,
      method: 'DELETE',
      path: '/v1/monitors/{monitor_id}',
      operationId: 'deleteMonitor',
      summary: 'Delete a monitor: no check starts and no event is sent from then on (our extension).',
      responses: { 204: { description: 'Deleted' }, ...errors },
      async handler(ctx, input) {
        await commands.remove(principalOf(ctx), idOf(input.params));
        ctx.status = 204;
      },
    },
    ...(['pause', 'resume'] as const).map(
      (action): Route => ({
        ...common,
        method: 'POST',
        path: `/v1/monitors/{monitor_id}/${action}`,
        operationId: action === 'pause' ? 'pauseMonitor' : 'resumeMonitor',
        summary: action === 'pause' ? 'Pause a monitor’s scheduled checks (a check in flight ends) (our extension).' : 'Resume a paused monitor’s scheduled checks (our extension).',
        responses: { 200: json('The monitor', MONITOR), ...errors },
        async handler(ctx, input) {
          const changed = await commands.setPaused(principalOf(ctx), idOf(input.params), action === 'pause');
          ctx.body = presentMonitor(changed.monitor, changed.nextCheckAt);
        },
      }),
    ),
    {
      ...common,
      method: 'POST',
      path: '/v1/monitors/{monitor_id}/check',
      operationId: 'checkMonitorNow',
      summary: 'Check a monitor now, beside its schedule (our extension).',
      description: 'A check that would overlap a running one is recorded as skipped (failure_reason overlap), never stacked.',
      responses: { 202: json('The check started', { type: 'object', required: ['check_id'], properties: { check_id: { type: 'string' } } }), ...errors },
      async handler(ctx, input) {
        await deps.readiness.requireWorker();
        const started = await commands.checkNow(principalOf(ctx), idOf(input.params));
        ctx.status = 202;
        ctx.set('Location', `/v1/monitors/${idOf(input.params)}/checks/${started.checkId}`);
        ctx.body = { check_id: started.checkId };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/monitors/{monitor_id}/checks',
      operationId: 'listMonitorChecks',
      summary: 'A monitor’s checks, newest first: time, pages checked, new, changed and removed counts, credits (our extension).',
      query: PAGE_QUERY,
      responses: { 200: json('`{checks, next_cursor}`', page('checks', CHECK)), ...errors },
      async handler(ctx, input) {
        const listed = await commands.checks(principalOf(ctx), idOf(input.params), { limit: (input.query.limit as number | undefined) ?? 20, ...(input.query.cursor ? { cursor: input.query.cursor as string } : {}) });
        ctx.body = { checks: listed.items.map(presentCheck), next_cursor: listed.nextCursor };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/monitors/{monitor_id}/checks/{check_id}',
      operationId: 'getMonitorCheck',
      summary: 'A check and its changes, each with its diff (our extension).',
      responses: { 200: json('The check and `changes`', { ...CHECK, properties: { ...CHECK.properties, changes: { type: 'array', items: CHANGE } } }), ...errors },
      async handler(ctx, input) {
        const found = await commands.check(principalOf(ctx), idOf(input.params), input.params.check_id ?? '');
        ctx.body = { ...presentCheck(found.check), changes: found.changes.map(presentChange) };
      },
    },
  ];
}
