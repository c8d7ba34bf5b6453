/**
 * Change tracking's comparison engine: pure functions from versions of a page to a change status and
 * its diff, and the noise profile learned per tracked URL. No I/O, no clock, no model: the same
 * versions always give the same answer. See README.md.
 */
export { compareSnapshots, probeProfile, MAX_OBSERVED_REGIONS, type CompareOptions } from './compare';
export { diffFields, MAX_FIELD_DEPTH, MAX_FIELDS, type FieldDiff } from './fields';
export { DIFF_BUDGET } from './myers';
export { emptyProfile, isNoiseProfile, updateProfile, LEARNING_DEFAULTS, MAX_REGIONS, type LearningOptions, type ObservationContext } from './profile';
export { fingerprintOf, snapshotOf, snapshotOfHtml, RULES_REVISION } from './snapshot';
export { maskLine } from './volatile';
export type {
  ChangeDiff,
  ChangeStatus,
  Comparison,
  FieldChange,
  IgnoredRun,
  MaskedValue,
  NoiseKind,
  NoiseProfile,
  NoiseRegion,
  RegionObservation,
  Snapshot,
} from './types';
