/**
 * The price of one page request per configuration, as the interface's cost model states it. Charging
 * (core/accounts) and the mode=auto rungs (engine/escalation) both read this one table.
 */
export const FETCH_CONFIGURATIONS = [
  { id: 'plain', jsRender: false, premiumProxy: false, credits: 1 },
  { id: 'js_render', jsRender: true, premiumProxy: false, credits: 5 },
  { id: 'premium_proxy', jsRender: false, premiumProxy: true, credits: 10 },
  { id: 'js_render_premium_proxy', jsRender: true, premiumProxy: true, credits: 25 },
] as const;

export type FetchConfiguration = (typeof FETCH_CONFIGURATIONS)[number];
export type ConfigurationId = FetchConfiguration['id'];

export function configurationOf(options: { jsRender: boolean; premiumProxy: boolean }): FetchConfiguration {
  return (
    FETCH_CONFIGURATIONS.find((entry) => entry.jsRender === options.jsRender && entry.premiumProxy === options.premiumProxy) ??
    FETCH_CONFIGURATIONS[3]
  );
}

/** Credits of one page request in the given configuration (1, 5, 10 or 25). */
export const costOf = (options: { jsRender: boolean; premiumProxy: boolean }): number => configurationOf(options).credits;
