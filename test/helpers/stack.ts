/**
 * The stack the whole suite shares, started once by the global setup. Tests reach the API over HTTP
 * at `testStack().urls.api`, and may stop, kill and restart its components.
 */
import type { Stack } from '../../scripts/stack/stack';

let current: Stack | undefined;

export function setTestStack(stack: Stack | undefined): void {
  current = stack;
}

export function testStack(): Stack {
  if (!current) throw new Error('the test stack is not running (test/setup/global.ts starts it)');
  return current;
}

let sitesAddress: string | undefined;

export function setExtractSitesAddress(address: string): void {
  sitesAddress = address;
}

/** The loopback address whose port 80 serves the Extract test sites (test/fixtures/extract-sites). */
export function extractSitesAddress(): string {
  if (!sitesAddress) throw new Error('the test stack has not chosen the Extract sites address');
  return sitesAddress;
}

/** Host names the fixtures use; the services resolve them to loopback through HOST_OVERRIDES. */
export const FIXTURE_DOMAIN = 'fixture.test';

/** Polls `check` until it returns true, at most `attempts` times `intervalMs` apart. */
export async function eventually(check: () => Promise<boolean>, attempts = 100, intervalMs = 200): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`condition not met after ${attempts} attempts`);
}

/** The header that opens the operational endpoints (`/metrics`, `/readyz?deep=true`) of the test stack. */
export function operatorHeaders(): Record<string, string> {
  return { Authorization: `Bearer ${testStack().component('api').spec.env.OPERATOR_TOKEN ?? ''}` };
}
