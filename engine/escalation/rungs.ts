/**
 * The fetch configurations `mode=auto` may use, as data: what each one costs, which engine runs it and
 * what it can get past. The ladder walks this table from the cheapest row up; nothing else in the
 * escalation knows the configurations by name.
 */
import { FETCH_CONFIGURATIONS, type ConfigurationId } from './configurations';

/** What a configuration brings against a block. */
export type Capability = 'javascript' | 'residential_ip';

export type RungId = ConfigurationId;

export interface Rung {
  id: RungId;
  /** Credits charged when this configuration returns the page. */
  cost: number;
  /** Which injected fetcher runs it. */
  engine: 'plain' | 'rendered';
  premiumProxy: boolean;
  capabilities: readonly Capability[];
}

/** One rung per priced configuration: its engine and what it brings follow from what it enables. */
export const RUNGS: readonly Rung[] = FETCH_CONFIGURATIONS.map((configuration) => ({
  id: configuration.id,
  cost: configuration.credits,
  engine: configuration.jsRender ? 'rendered' : 'plain',
  premiumProxy: configuration.premiumProxy,
  capabilities: [
    ...(configuration.jsRender ? (['javascript'] as const) : []),
    ...(configuration.premiumProxy ? (['residential_ip'] as const) : []),
  ],
}));

export const rungById = (id: string, rungs: readonly Rung[] = RUNGS): Rung | undefined => rungs.find((rung) => rung.id === id);

/** Response header naming the configuration that returned the page. */
export const AUTO_CONFIGURATION_HEADER = 'X-Auto-Configuration';

/** The rung as the Fetch parameters a caller would set for it: `js_render=true&premium_proxy=false`. */
export const describeRung = (rung: Rung): string => `js_render=${String(rung.engine === 'rendered')}&premium_proxy=${String(rung.premiumProxy)}`;
