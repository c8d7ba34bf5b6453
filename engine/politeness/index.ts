export { HostGate, HostPaused, type GateAnswer, type GateTicket, type HostGateOptions } from './gate';
export { FairTurns } from './fair';
export { GateKeys, type Budget, type BudgetRules, type GateKey } from './keys';
export { retryAfterMs } from './retry-after';
export type { HostGateStore, HostState } from './store';
