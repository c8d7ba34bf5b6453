export { HostGate, HostWait, isHostWait, type GateAnswer, type GateEntry, type GateTicket, type HostGateOptions, type Park } from './gate';
export { FairTurns } from './fair';
export { GateKeys, type Budget, type BudgetRules, type GateKey } from './keys';
export { retryAfterMs } from './retry-after';
export type { HostGateStore, HostState, HostTurns, HostWaiter } from './store';
