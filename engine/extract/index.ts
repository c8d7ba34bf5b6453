/** Extract's engine: learning a recipe from sample pages, verifying it, and interpreting it per request. */
export { looksLikePage, registrableDomainOf, sampleOrder, shapeBalanced, shapeOf, sitemapLocations } from './discover';
export { belongs, chromeOf, exampleKind, kindsOf, pageStructure, type Kind, type PageStructure } from './kinds';
export { extractEnvelope } from './envelope';
export { induceRole, type Induction, type SamplePage } from './induce';
export { induceList } from './induce-list';
export { ALGORITHM_VERSION, servesVertical, type DecimalMark, type DomainRecipe, type FieldRecipe, type FieldType, type ListRecipe, type RoleRecipe, type Source } from './recipe-data';
export { applyRole, classify, project, recognise, type Applied, type Parsed } from './recipe';
export { pageShingles, pageSignals, parsePage } from './signals';
export { EXTRA_PAGES, INDUCE_SHARE, preparationSeed, SAMPLE_PAGES, SAMPLE_TRIES, splitSample } from './sampling';
export { standardMapping, STANDARD_FIELDS, toStandard } from './standard';
export { verifyRole, type Verification } from './verify';
export { EXTRACT_PAGE_TASKS, type ExtractPageArgs, type ExtractPageTasks, type ExtractPageValue } from './page-task';
