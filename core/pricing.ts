/**
 * The price of one page request per configuration, as the interface's cost model states it. The
 * configurations and their credits are the engine's table (engine/escalation/configurations.ts), which
 * the mode=auto rungs walk; charging (core/accounts) reads its price here.
 */
import { configurationOf } from '../engine';

export { configurationOf, FETCH_CONFIGURATIONS, type ConfigurationId, type FetchConfiguration } from '../engine';

/** Credits of one page request in the given configuration (1, 5, 10 or 25). */
export const costOf = (options: { jsRender: boolean; premiumProxy: boolean }): number => configurationOf(options).credits;
