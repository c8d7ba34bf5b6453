/**
 * The local server key that seals webhook signing secrets (`SECRETS_KEY`): generated once into the data
 * folder, readable by its owner only, and reused on every later start so stored secrets stay readable.
 * Production sets `SECRETS_KEY` itself (docker-compose requires it).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function ensureServerKey(dataDir: string): string {
  const file = path.join(dataDir, 'secrets.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
