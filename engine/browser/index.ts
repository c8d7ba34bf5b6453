/** The browser engine: a pool of Chromium browsers and the `js_render` fetch on top of it. */
export { BrowserPool, browserPoolOptionsFromConfig, type BrowserInfo, type BrowserPoolOptions, type PageLease, type PoolHooks } from './pool';
export { DEFAULT_RENDER_LIMITS, render, renderLimitsFromConfig, type RenderDeps, type RenderLimits } from './render';
export { blockedTypes, DEFAULT_BLOCKED, parseBlockResources } from './blocking';
export { KINDS as INSTRUCTION_KINDS, parseInstructions, type Instruction, type InstructionsReport } from './instructions';
export { chromiumArgs, findChromium, hostResolverRules } from './flags';
export * from './types';
