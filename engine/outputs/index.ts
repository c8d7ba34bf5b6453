/**
 * Output conversions of the fetch engine: what a fetched page becomes for `response_type`,
 * `css_extractor`, `outputs` and `autoparse`. All functions are pure: HTML (and the page's final URL
 * for resolving links) in, string or JSON out.
 */
export { toMarkdown } from './markdown';
export { toPlainText } from './plaintext';
export { findMainContent, mainContentMarkdown, mainContentText, renderMainContent, type ArticleMetadata, type MainContent, type MainContentFormat } from './main-content';
export { applyCssRules, cssExtract, invalidSelector, parseCssExtractor, type CssExtractResult, type CssExtractValue, type CssExtractorFailure, type CssExtractorParse, type CssRule } from './css-extract';
export { OUTPUT_KINDS, extractOutputs, isOutputKind, parseOutputKinds, type OutputKind, type OutputKindsParse, type OutputValues, type Outputs } from './extract';
export type { Headings, Menu, MenuItem, Metadata } from './extract/structure';
export type { TableOutput } from './extract/tables';
export { AUTOPARSE_LINK_LIMIT, autoparse, type Autoparsed } from './autoparse';
export type { MicrodataItem } from './autoparse/microdata';
export { decodeHtml, detectCharset, isHtml } from './decode';
export { DEFAULT_PARSE_CAPS, HtmlRefused, isHtmlRefused, type HtmlLimit, type ParseCap, type ParseCaps } from './limits';
export { HtmlOutputs, type HtmlOutputsOptions, type HtmlTaskArgs, type HtmlTaskTable, type HtmlTaskValue } from './run';
export { htmlTask, type HtmlAnswer, type HtmlSource, type HtmlTaskInput } from './tasks';
export { scanHtml, type Scan } from './scan';
