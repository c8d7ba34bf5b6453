/**
 * Field types and their normalisers. A type is inferred once, at preparation, from every sampled value
 * of a field, with the site's decimal separator; the runtime applies the stored type and nothing else,
 * so the same page always gives the same value.
 */
import type { DecimalMark, FieldType } from './recipe-data';

export type { DecimalMark, FieldType };

const CURRENCY = /[$€£¥₹]|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|MXN|BRL)\b/;

/** `1.234.567,5` with mark `,` → 1234567.5; undefined when the text holds no number. */
export function parseNumber(text: string, mark: DecimalMark): number | undefined {
  const match = (mark === ',' ? /-?\d{1,3}(?:[.\s\u00a0]\d{3})+(?:,\d+)?|-?\d+(?:,\d+)?/ : /-?\d{1,3}(?:[,\s\u00a0]\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?/).exec(text);
  if (!match) return undefined;
  const digits = mark === ',' ? match[0].replace(/[.\s\u00a0]/g, '').replace(',', '.') : match[0].replace(/[,\s\u00a0]/g, '');
  const value = Number(digits);
  return Number.isFinite(value) ? value : undefined;
}

/** The decimal mark a site writes, judged from all its numbers: `1.234.567` or `1.234,50` mean a comma. */
export function decimalMarkOf(texts: readonly string[]): DecimalMark {
  let comma = 0;
  let dot = 0;
  for (const text of texts) {
    if (/\d{1,3}(?:\.\d{3})+(?:,\d+)?(?!\d)/.test(text) && !/\d\.\d{1,2}(?!\d)/.test(text)) comma++;
    if (/\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)/.test(text)) dot++;
    if (/\d,\d{1,2}(?!\d)/.test(text) && !/\d{1,3}(?:,\d{3})/.test(text)) comma++;
  }
  return comma > dot ? ',' : '.';
}

/** A unit after a quantity (`1,450 sq ft`, `97 m²`): the number is the value. */
const UNIT = /\s*(?:m²|m2|sq\.?\s?ft\.?|ft²|sqm|ha|ac|acres?|km|mi)$/i;

/** A count with its unit word (`3 bd`, `2 beds`): the number is the value, when the words are few. */
const COUNTED = /^-?[\d.,]+\s*([\p{L}.]{1,10})$/u;
const MAX_COUNT_WORDS = 2;

function counted(values: readonly string[], mark: DecimalMark): boolean {
  const words = new Set<string>();
  for (const value of values) {
    const match = COUNTED.exec(value.trim());
    if (!match || parseNumber(value, mark) === undefined) return false;
    words.add(match[1]!.toLowerCase().replace(/s?\.?$/, ''));
  }
  return words.size <= MAX_COUNT_WORDS;
}

/** A date written with dots (`21.06.2010`, `1.3.2024`): day, month and year, never a number. */
const DOTTED_DATE = /^\d{1,2}\.\d{1,2}\.(?:\d{2}|\d{4})$/;

const isUrl = (text: string): boolean => /^(https?:)?\/\//i.test(text) || /^\/[^\s]*$/.test(text);

/** The narrowest type every value fits; numbers only when the text is essentially the number. */
export function inferType(values: readonly string[], mark: DecimalMark): FieldType {
  if (values.length === 0) return 'text';
  if (values.every(isUrl)) return 'url';
  // Identifiers (ISBNs, EANs, codes with a leading zero) are written as digits but are not quantities.
  if (values.some((value) => /^0\d/.test(value.trim()) || DOTTED_DATE.test(value.trim())) || values.every((value) => /^\d{9,}$/.test(value.trim().replace(/-/g, '')))) return 'text';
  const numeric =
    values.every((value) => {
      const stripped = value.replace(UNIT, '').replace(CURRENCY, '').replace(/[\s\u00a0]/g, '');
      return /^-?[\d.,]+$/.test(stripped) && parseNumber(value, mark) !== undefined;
    }) || counted(values, mark);
  if (numeric) {
    if (values.some((value) => CURRENCY.test(value))) return 'price';
    return values.every((value) => Number.isInteger(parseNumber(value, mark))) ? 'int' : 'decimal';
  }
  return 'text';
}

/** A value as the recipe's type says, or undefined when it does not fit (a broken field, not a value). */
export function normalize(value: string, type: FieldType, mark: DecimalMark, baseUrl: string): string | number | undefined {
  const text = value.trim();
  if (text === '') return undefined;
  switch (type) {
    case 'int': {
      const number = parseNumber(text, mark);
      return number !== undefined && Number.isInteger(number) ? number : undefined;
    }
    case 'decimal':
    case 'price':
      return parseNumber(text, mark);
    case 'url':
      try {
        return new URL(text, baseUrl).href;
      } catch {
        return undefined;
      }
    case 'text':
      return text;
  }
}
