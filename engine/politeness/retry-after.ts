/** `Retry-After` in milliseconds (seconds or an HTTP date), when a 429 or 503 answer asks to come back later. */
export function retryAfterMs(status: number, headers: ReadonlyArray<readonly [string, string]>, now: number = Date.now()): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const value = headers.find(([name]) => name.toLowerCase() === 'retry-after')?.[1]?.trim();
  if (!value) return undefined;
  if (/^\d{1,7}$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
