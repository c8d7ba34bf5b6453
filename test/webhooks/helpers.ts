/** Batch-surface requests for the webhook tests: an account of its own, `X-API-Key`, JSON answers. */
import { spawnSync } from 'node:child_process';
import { newAccount, openAccounts, type AccountsHandle, type TestAccount } from '../helpers/app';
import { testStack } from '../helpers/stack';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

export async function batchRequest(key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${testStack().urls.api}${path}`, {
    method,
    headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

export async function webhookAccount(handle: AccountsHandle): Promise<TestAccount> {
  return newAccount(handle.accounts, { credits: 1000 });
}

export { openAccounts, type AccountsHandle, type TestAccount };

/**
 * An independent verifier: Python's own `hmac` and `hashlib` check `signature` over the raw bytes with
 * the base64 secrets, as a receiver written from the interface description would.
 */
export function pythonVerifies(body: Buffer, signature: string, secrets: Record<string, string>): boolean {
  const script = [
    'import base64, hashlib, hmac, json, sys, time',
    'data = json.loads(sys.argv[1])',
    'body = base64.b64decode(data["body"])',
    'parts = dict(item.split("=", 1) for item in data["signature"].split(","))',
    'secret = base64.b64decode(data["secrets"][parts["kid"]])',
    'assert abs(time.time() - int(parts["t"])) <= 300',
    'expected = hmac.new(secret, parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()',
    'print("ok" if hmac.compare_digest(expected, parts["v1"]) else "bad")',
  ].join('\n');
  const input = JSON.stringify({ body: body.toString('base64'), signature, secrets });
  const result = spawnSync('python3', ['-c', script, input], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.trim() === 'ok';
}
