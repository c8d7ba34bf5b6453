/** Extract's engine: learning a recipe from sample pages, verifying it, and interpreting it per request. */
export { groupKinds, exampleRole, pageLinks, pageUrls, registrableDomainOf, robotsSitemaps, sameShape, sampleOrder, sitemapLocations, type Kind } from './discover';
export { induceRole, type Induction, type SamplePage } from './induce';
export { applyRole, classify, project, type Applied, type Parsed } from './recipe';
export { pageShingles, pageSignals, parsePage } from './signals';
export { standardMapping, STANDARD_FIELDS, toStandard } from './standard';
export { verifyRole, type Verification } from './verify';
