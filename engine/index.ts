/**
 * The fetch engine's one public surface: what the API, the activities and the worker import (lint
 * keeps them off the engine's inner modules). The engine's own folders import each other directly.
 */
export { createFetchEngine, type EngineConfig, type FetchEngine, type FetchEngineDeps } from './http/engine';
export {
  engineError,
  type BodyCheck,
  type BodyRefusal,
  type BodyWatch,
  type EngineError,
  type EngineErrorKind,
  type EngineFailure,
  type EngineMethod,
  type EngineProxyInfo,
  type EngineRequest,
  type EngineResult,
  type EngineSuccess,
  type EngineTimeouts,
} from './types';
export { FAILURES, failureOf, type Blame, type FailureKind, type FailureRow } from './failures';
export { createFetchService, hostGateFromConfig, htmlOutputsFromConfig, type FetchService, type FetchStores } from './service';
export { HostGate, retryAfterMs, type GateAnswer, type GateTicket, type Park, type HostGateStore, type HostState, type HostTurns, type HostWaiter } from './politeness';
export { parseRobots, productToken, RobotsReader, type RobotsAnswer, type RobotsRules, type RobotsVerdict } from './robots';
export { createRetrieval, type BrowserOptions, type Page, type Retrieval, type RetrievalError, type RetrievalMode, type RetrieveRequest, type RetrieveResult } from './retrieve';
export { type DomainRungRecord, type DomainRungStore, type RungId } from './escalation';
export { AUTO_CONFIGURATION_HEADER, configurationOf, DETECT_SCANNED_BYTES, describeRung, FETCH_CONFIGURATIONS, rungById, type ConfigurationId, type FetchConfiguration, type Rung } from './escalation';
export { BLOCKABLE_TYPES, parseBlockResources, parseInstructions, type Device, type RenderError, type ScreenshotRequest } from './browser';
export {
  autoparse,
  invalidSelector,
  cssExtract,
  decodeHtml,
  detectCharset,
  extractOutputs,
  findMainContent,
  renderMainContent,
  type MainContentFormat,
  isHtml,
  OUTPUT_KINDS,
  parseCssExtractor,
  parseOutputKinds,
  toMarkdown,
  toPlainText,
  type OutputKind,
  DEFAULT_PARSE_CAPS,
  HtmlOutputs,
  HtmlRefused,
  isHtmlRefused,
  type HtmlLimit,
  type HtmlSource,
  type ParseCaps,
} from './outputs';
export { isTaskFailure, taskModule, transfer, TaskFailure, WorkerPool, type RunOptions, type TaskFailureReason, type TaskModule, type TaskTable, type WorkerPoolOptions } from './threads';
export * from './extract';
export { createTargetGuard, classifyAddress, domainKeyOf, isPublicAddress, createHostResolver, registrableDomain, type TargetGuard } from './safety';
export { ACCEPT_ENCODING, DEFAULT_USER_AGENT } from './http/headers';
export { SESSION_TTL_MS } from './proxies/sessions';
export type { Proxy, ProxyChoice, ProxyChoiceRequest, ProxyPools } from './proxies/pool';
export { createWebhookPoster, WEBHOOK_USER_AGENT, type AttemptOutcome, type WebhookPoster } from './webhooks/post';
export { checkWebhookUrl, type WebhookTargetVerdict } from './webhooks/target';
export {
  compareSnapshots,
  diffFields,
  emptyProfile,
  fingerprintOf,
  isNoiseProfile,
  probeProfile,
  RULES_REVISION,
  snapshotOf,
  snapshotOfHtml,
  updateProfile,
  type ChangeDiff,
  type ChangeStatus,
  type CompareOptions,
  type Comparison,
  type FieldChange,
  type IgnoredRun,
  type NoiseKind,
  type NoiseProfile,
  type Snapshot,
} from './changes';
export {
  createDocumentPool,
  detectDocument,
  documentFormatOfName,
  documentFormatOfType,
  isLegacyOffice,
  DOCUMENT_FAILURES,
  DEFAULT_DOCUMENT_LIMITS,
  DEFAULT_POOL_OPTIONS,
  fileNameFromDisposition,
  mimeOf,
  mimeOfFormat,
  type ConvertOptions,
  type DocumentConversion,
  type DocumentFailure,
  type DocumentFailureCode,
  type DocumentFormat,
  type DocumentInfo,
  type DocumentOutput,
  type DocumentPool,
  type DocumentResult,
  type PoolOptions as DocumentPoolOptions,
} from './documents';
