/**
 * The one reading of a yes-or-no text: `true`/`1` and `false`/`0`, in any case, spaces around ignored.
 * Query parameters take exactly these; environment variables also take the spellings operators use
 * (`yes`/`on`, `no`/`off`, and empty for no).
 */
const YES = ['true', '1'];
const NO = ['false', '0'];
const ENVIRONMENT_YES = [...YES, 'yes', 'on'];
const ENVIRONMENT_NO = [...NO, 'no', 'off', ''];

export function parseBoolean(raw: string, spellings: 'strict' | 'environment' = 'strict'): boolean | undefined {
  const value = raw.trim().toLowerCase();
  if ((spellings === 'environment' ? ENVIRONMENT_YES : YES).includes(value)) return true;
  if ((spellings === 'environment' ? ENVIRONMENT_NO : NO).includes(value)) return false;
  return undefined;
}
