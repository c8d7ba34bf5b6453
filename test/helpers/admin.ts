/** `npm run admin -- …` as an operator runs it: the same script, against the test stack's database. */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { childEnvironment, PROJECT_ROOT } from '../../base/config';
import { testStack } from './stack';

/** Runs `npm run admin -- …` as an operator would (the same script, against the stack's database). */
export function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { MONGODB_URL, MONGODB_DATABASE } = testStack().component('api').spec.env;
  return adminWith({ MONGODB_URL, MONGODB_DATABASE }, ...args);
}

/** `npm run admin -- …` with the environment changed as given (undefined removes a variable). */
export function adminWith(env: Record<string, string | undefined>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'admin.ts'), ...args],
      { cwd: PROJECT_ROOT, env: childEnvironment(env), timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export async function adminJson(...args: string[]): Promise<Record<string, unknown>> {
  const result = await admin(...args, '--json');
  expect(result.code, result.stderr).to.equal(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

