/** The fetch engine's public surface: everything a caller (API route, activities, browser, escalation) imports. */
export { createFetchEngine, type EngineConfig, type FetchEngine, type FetchEngineDeps } from './engine';
export {
  ENGINE_ERRORS,
  blameFor,
  engineError,
  errorCodeFor,
  isTargetFault,
  type Blame,
  type EngineError,
  type EngineErrorKind,
  type EngineFailure,
  type EngineMethod,
  type EngineProxyInfo,
  type EngineRequest,
  type EngineResult,
  type EngineSuccess,
  type EngineTimeouts,
  type ErrorKindInfo,
} from './types';
export { createTargetGuard, classifyAddress, isPublicAddress, createHostResolver, type TargetGuard } from './safety';
export { ACCEPT_ENCODING, DEFAULT_USER_AGENT } from './http/headers';
export { SESSION_TTL_MS } from './proxies/sessions';
export type { Proxy, ProxyChoice, ProxyChoiceRequest, ProxyPools } from './proxies/pool';
export { createWebhookPoster, WEBHOOK_USER_AGENT, type AttemptOutcome, type WebhookPoster } from './webhooks/post';
export { checkWebhookUrl, type WebhookTargetVerdict } from './webhooks/target';
