/** `mode=auto`: the configurations as data, block detection, the ladder and its per-domain memory. */
export { configurationOf, FETCH_CONFIGURATIONS, type ConfigurationId, type FetchConfiguration } from './configurations';
export { AUTO_CONFIGURATION_HEADER, describeRung, RUNGS, rungById, type Capability, type Rung, type RungId } from './rungs';
export { DETECT_SCANNED_BYTES, detectBlock, strippedText, type BlockVerdict, type ResponseView } from './detect';
export {
  createRungMemory,
  InMemoryDomainRungStore,
  rungDomainOf,
  type DomainRungRecord,
  type DomainRungStore,
  type Recollection,
  type RungMemory,
} from './memory';
export {
  EXHAUSTED_DETAIL,
  runLadder,
  type Attempt,
  type Fetcher,
  type LadderFailure,
  type LadderFetchers,
  type LadderOptions,
  type LadderResult,
  type LadderSuccess,
} from './ladder';
