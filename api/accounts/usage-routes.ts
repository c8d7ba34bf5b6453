/**
 * Plan usage, `GET /v1/subscriptions/self/details` with `X-API-Key`: the period, credits used and
 * left, concurrency limit and slots in use, in the shape existing clients read. It takes no slot.
 */
import type { Middleware } from 'koa';
import { periodBounds, periodOf, type Accounts, type Principal } from '../../core/accounts';
import type { Config } from '../../base/config';
import type { RequestState } from '../http/context';
import type { Route } from '../http/routes';
import { authenticate, principalOf, securityOf } from '../auth/authenticate';

export async function usageDetails(accounts: Accounts, principal: Principal): Promise<Record<string, unknown>> {
  const period = periodOf(accounts.clock.now());
  const { start, end } = periodBounds(period);
  const [usage, inUse] = await Promise.all([
    accounts.charging.usage(principal.accountId, period),
    accounts.slots.inUse(principal.accountId),
  ]);
  const { plan } = principal;
  const remaining = Math.max(0, plan.credits - usage.used);
  return {
    status: 'active',
    period_starts_at: start.toISOString(),
    period_ends_at: end.toISOString(),
    usage: usage.used,
    usage_percent: plan.credits > 0 ? Math.min(100, Math.round((usage.used / plan.credits) * 10_000) / 100) : 100,
    plan: {
      name: plan.name,
      price: plan.price,
      recurrence: 'monthly',
      products: {
        api: {
          usage: usage.used,
          limit: plan.credits,
          remaining,
          reserved: usage.held,
          concurrency: { limit: plan.concurrency, usage: inUse },
        },
      },
      limits: { active_jobs: plan.activeJobs, preparation_slots: plan.preparationSlots },
      // Whether `extract` on Fetch works on this plan (else 402 AUTH010).
      features: { extract: plan.extract },
    },
    api_key: {
      id: principal.keyId,
      usage: usage.keys[principal.keyId] ?? 0,
      credit_cap: principal.keyCap,
    },
    top_ups: [],
  };
}

const DETAILS_SCHEMA = {
  type: 'object',
  required: ['status', 'period_starts_at', 'period_ends_at', 'usage', 'usage_percent', 'plan', 'top_ups'],
  properties: {
    status: { type: 'string' },
    period_starts_at: { type: 'string', format: 'date-time' },
    period_ends_at: { type: 'string', format: 'date-time' },
    usage: { type: 'integer', description: 'Credits used this period.' },
    usage_percent: { type: 'number' },
    plan: { type: 'object' },
    api_key: { type: 'object' },
    top_ups: { type: 'array' },
  },
};

/** `authentication` replaces the key check (the benchmark's baseline runs the same handler without it). */
export function planUsageRoutes(deps: { accounts: Accounts; config: Pick<Config, 'trustProxy'> }, options: { authentication?: Middleware<RequestState> } = {}): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/subscriptions/self/details',
      operationId: 'getPlanUsage',
      summary: 'Plan usage: period, credits used and left, concurrency limit and slots in use.',
      tags: ['Plan usage'],
      security: securityOf('usage'),
      before: [options.authentication ?? authenticate(deps, 'usage')],
      responses: { 200: { description: 'Plan usage', content: { 'application/json': { schema: DETAILS_SCHEMA } } } },
      async handler(ctx) {
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await usageDetails(deps.accounts, principalOf(ctx));
      },
    },
  ];
}
