/**
 * The fetch configurations `mode=auto` may use, as data: what each one costs, which engine runs it and
 * what it can get past. The ladder walks this table from the cheapest row up; nothing else in the
 * escalation knows the configurations by name.
 */

/** What a configuration brings against a block. */
export type Capability = 'javascript' | 'residential_ip';

export type RungId = 'plain' | 'js_render' | 'premium_proxy' | 'js_render_premium_proxy';

export interface Rung {
  id: RungId;
  /** Credits charged when this configuration returns the page. */
  cost: number;
  /** Which injected fetcher runs it. */
  engine: 'plain' | 'rendered';
  premiumProxy: boolean;
  capabilities: readonly Capability[];
}

export const RUNGS: readonly Rung[] = [
  { id: 'plain', cost: 1, engine: 'plain', premiumProxy: false, capabilities: [] },
  { id: 'js_render', cost: 5, engine: 'rendered', premiumProxy: false, capabilities: ['javascript'] },
  { id: 'premium_proxy', cost: 10, engine: 'plain', premiumProxy: true, capabilities: ['residential_ip'] },
  { id: 'js_render_premium_proxy', cost: 25, engine: 'rendered', premiumProxy: true, capabilities: ['javascript', 'residential_ip'] },
];

export const rungById = (id: string, rungs: readonly Rung[] = RUNGS): Rung | undefined => rungs.find((rung) => rung.id === id);

/** Response header naming the configuration that returned the page. */
export const AUTO_CONFIGURATION_HEADER = 'X-Auto-Configuration';

/** The rung as the Fetch parameters a caller would set for it: `js_render=true&premium_proxy=false`. */
export const describeRung = (rung: Rung): string => `js_render=${String(rung.engine === 'rendered')}&premium_proxy=${String(rung.premiumProxy)}`;
