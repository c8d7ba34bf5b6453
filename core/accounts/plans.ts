/**
 * Plans, their limits and capabilities, from config: the free plan (FREE_PLAN_*) and the operator's
 * paid plans (PLANS); EXTRACT_PLANS says which include Extract. An account names its plan and may
 * carry operator overrides of credits and concurrency.
 *
 * A plan's `render_pages` is resolved here against the machine: unset, half of BROWSER_MAX_PAGES (one
 * account never holds the whole browser), and never below 1 nor above BROWSER_MAX_PAGES.
 */
import type { AccountLimits, Config } from '../../base/config';

export interface Plan {
  name: string;
  /** Credits per UTC calendar month. */
  credits: number;
  /** Simultaneous Fetch requests. */
  concurrency: number;
  /** Active Crawl and Batch jobs, shared by both surfaces. */
  activeJobs: number;
  /** Extract domain preparations per UTC month. */
  preparationSlots: number;
  /** Monthly price in US dollars, shown by plan usage. */
  price: number;
  /** `extract` on Fetch is included (else 402 AUTH010). */
  extract: boolean;
  /** What the account may hold at once (ACCOUNT_LIMITS with the plan's PLAN_LIMITS on top; `renderPages` resolved). */
  limits: AccountLimits & { renderPages: number };
}

export interface PlanOverrides {
  credits?: number;
  concurrency?: number;
  /** The account's own request budget (a client the operator trusts with more, or one kept to less). */
  requestsPerSecond?: number;
  requestBurst?: number;
  requestsInFlight?: number;
}

export type PlanConfig = Pick<
  Config,
  'freePlanCredits' | 'freePlanConcurrency' | 'plans' | 'activeJobsLimit' | 'preparationSlots' | 'extractPlans' | 'accountLimits' | 'planLimits' | 'browserMaxPages'
>;

/** Browser pages of an account with `asked` (unset: half the machine's), within 1 and the machine's `maxPages`. */
export const renderPagesOf = (asked: number | undefined, maxPages: number): number => Math.max(1, Math.min(maxPages, asked ?? Math.floor(maxPages / 2)));

export const FREE_PLAN = 'free';

export class PlanCatalogue {
  private readonly plans = new Map<string, Plan>();

  constructor(config: PlanConfig) {
    const extract = (name: string) => config.extractPlans.includes('*') || config.extractPlans.includes(name);
    const limits = (name: string): Plan['limits'] => {
      const merged = { ...config.accountLimits, ...(config.planLimits[name] ?? {}) };
      return { ...merged, renderPages: renderPagesOf(merged.renderPages, config.browserMaxPages) };
    };
    this.plans.set(FREE_PLAN, {
      name: FREE_PLAN,
      credits: config.freePlanCredits,
      concurrency: config.freePlanConcurrency,
      activeJobs: config.activeJobsLimit,
      preparationSlots: config.preparationSlots,
      price: 0,
      extract: extract(FREE_PLAN),
      limits: limits(FREE_PLAN),
    });
    for (const plan of config.plans) {
      this.plans.set(plan.name, {
        name: plan.name,
        credits: plan.credits,
        concurrency: plan.concurrency,
        activeJobs: plan.activeJobs ?? config.activeJobsLimit,
        preparationSlots: plan.preparationSlots ?? config.preparationSlots,
        price: plan.price ?? 0,
        extract: extract(plan.name),
        limits: limits(plan.name),
      });
    }
  }

  has(name: string): boolean {
    return this.plans.has(name);
  }

  names(): string[] {
    return [...this.plans.keys()];
  }

  /** Names of the plans that include Extract. */
  withExtract(): string[] {
    return [...this.plans.values()].filter((plan) => plan.extract).map((plan) => plan.name);
  }

  /** The account's effective limits; a plan removed from config falls back to the free plan. */
  resolve(name: string, overrides: PlanOverrides = {}): Plan {
    const plan = this.plans.get(name) ?? (this.plans.get(FREE_PLAN) as Plan);
    return {
      ...plan,
      // Stored overrides may read null (unset), not only undefined.
      ...(typeof overrides.credits === 'number' ? { credits: overrides.credits } : {}),
      ...(typeof overrides.concurrency === 'number' ? { concurrency: overrides.concurrency } : {}),
      limits: {
        ...plan.limits,
        ...(typeof overrides.requestsPerSecond === 'number' ? { requestsPerSecond: overrides.requestsPerSecond } : {}),
        ...(typeof overrides.requestBurst === 'number' ? { requestBurst: overrides.requestBurst } : {}),
        ...(typeof overrides.requestsInFlight === 'number' ? { requestsInFlight: overrides.requestsInFlight } : {}),
      },
    };
  }
}
