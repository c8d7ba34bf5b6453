/**
 * `css_extractor`: a JSON object of output keys to CSS selectors. A selector ending in `@name` returns
 * that attribute of the matches (URL attributes made absolute) instead of their text.
 *
 * Result per key: one match gives a string, several give an array, none give an empty array (an empty
 * string would be indistinguishable from one match with empty text). Matches without the requested
 * attribute are left out. Problems with the parameter itself are returned, not thrown, as a failure
 * the API maps to RESP004.
 */
import type { ErrorCode } from '../../base/errors';
import { type HTMLElement, documentBase, parseHtml, resolveUrl, visibleText } from './dom';

export interface CssRule {
  key: string;
  selector: string;
  attribute?: string;
}

export interface CssExtractorFailure {
  ok: false;
  code: Extract<ErrorCode, 'RESP004'>;
  detail: string;
}

export type CssExtractorParse = { ok: true; rules: CssRule[] } | CssExtractorFailure;
export type CssExtractValue = string | string[];
export type CssExtractResult = { ok: true; data: Record<string, CssExtractValue> } | CssExtractorFailure;

/** Attributes holding a URL: returned absolute, as a client would follow them. */
const URL_ATTRIBUTES: ReadonlySet<string> = new Set([
  'href', 'src', 'action', 'formaction', 'poster', 'cite', 'data', 'background', 'data-src', 'data-href', 'data-url', 'longdesc',
]);

const ATTRIBUTE_NAME = /^[A-Za-z_:][-A-Za-z0-9_:.]*$/;
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * `selector @attribute` split at its last `@` (an attribute name holds none), or undefined. By hand:
 * `^(.*?)\s*@(name)$` tries each `@` with a lazy scan, quadratic in a long parameter.
 */
function attributeSuffix(value: string): [selector: string, attribute: string] | undefined {
  const at = value.lastIndexOf('@');
  if (at < 0) return undefined;
  const attribute = value.slice(at + 1);
  const selector = value.slice(0, at).trimEnd();
  return ATTRIBUTE_NAME.test(attribute) && !LINE_BREAK.test(selector) ? [selector, attribute] : undefined;
}

/** Compiling against an empty document validates a selector without any page. */
const EMPTY_DOCUMENT = parseHtml('<html><body></body></html>');

const failure = (detail: string): CssExtractorFailure => ({ ok: false, code: 'RESP004', detail });

/** Why a CSS selector cannot be compiled, or undefined when it can: checked without any page or browser. */
export function invalidSelector(selector: string): string | undefined {
  try {
    EMPTY_DOCUMENT.querySelectorAll(selector);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Validates the parameter on its own, so a bad one is refused before any fetch. */
export function parseCssExtractor(spec: string): CssExtractorParse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(spec);
  } catch {
    return failure('css_extractor is not valid JSON; send a JSON object such as {"title": "h1", "links": "a @href"}.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return failure('css_extractor must be a JSON object mapping output keys to CSS selectors.');
  }
  const entries = Object.entries(parsed);
  if (entries.length === 0) return failure('css_extractor must name at least one output key.');
  const rules: CssRule[] = [];
  for (const [key, value] of entries) {
    if (typeof value !== 'string' || value.trim() === '') {
      return failure(`css_extractor key "${key}" must map to a non-empty CSS selector string.`);
    }
    const match = attributeSuffix(value.trim());
    const selector = (match ? match[0] : value).trim();
    if (selector === '') return failure(`css_extractor key "${key}" has no selector before "@${match?.[1] ?? ''}".`);
    try {
      EMPTY_DOCUMENT.querySelectorAll(selector);
    } catch (error) {
      const reason = error instanceof Error ? `: ${error.message}` : '';
      return failure(`css_extractor key "${key}" has an invalid CSS selector "${selector}"${reason}.`);
    }
    rules.push(match ? { key, selector, attribute: match[1].toLowerCase() } : { key, selector });
  }
  return { ok: true, rules };
}

function valuesOf(matches: HTMLElement[], rule: CssRule, base: string): string[] {
  const values: string[] = [];
  for (const el of matches) {
    if (rule.attribute === undefined) {
      values.push(visibleText(el));
      continue;
    }
    const raw = el.getAttribute(rule.attribute);
    if (raw === undefined) continue;
    values.push(URL_ATTRIBUTES.has(rule.attribute) ? (resolveUrl(raw, base) ?? raw.trim()) : raw.trim());
  }
  return values;
}

/** Runs already-validated rules over a page. */
export function applyCssRules(html: string, url: string, rules: readonly CssRule[]): Record<string, CssExtractValue> {
  const root = parseHtml(html);
  const base = documentBase(root, url);
  // fromEntries defines own properties, so a key such as "__proto__" stays an ordinary key.
  return Object.fromEntries(
    rules.map((rule) => {
      const values = valuesOf(root.querySelectorAll(rule.selector), rule, base);
      return [rule.key, values.length === 1 ? (values[0] ?? '') : values];
    }),
  );
}

export function cssExtract(html: string, url: string, spec: string): CssExtractResult {
  const parsed = parseCssExtractor(spec);
  if (!parsed.ok) return parsed;
  return { ok: true, data: applyCssRules(html, url, parsed.rules) };
}
