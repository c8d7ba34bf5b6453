/**
 * The four fetch configurations as data: what each enables and the credits the interface's cost model
 * gives it. The escalation walks this table from the cheapest row up; charging (core/pricing.ts) reads
 * the same rows, so the ladder and the bill never disagree.
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
