/**
 * schemathesis from PyPI, the contract tester, installed once into a virtualenv in the git-ignored
 * STACK_DIR (as the Temporal CLI and the Python clients are), so a fresh clone's `npm test` needs no
 * manual step. A missing python3 or a failed install fails the contract test: it is never skipped.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { processConfig } from '../../base/config';

export const SCHEMATHESIS_VERSION = '4.32.5';

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}${result.error ? String(result.error) : ''}`);
}

/** The `st` command of a virtualenv with `schemathesis==SCHEMATHESIS_VERSION`. */
export function schemathesisCommand(): string {
  const venv = path.join(processConfig().stackDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
  const command = path.join(venv, 'bin', 'st');
  const marker = path.join(venv, '.installed');
  if (existsSync(marker)) return command;
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `schemathesis==${SCHEMATHESIS_VERSION}`]);
  run(path.join(venv, 'bin', 'python'), ['-c', `import pathlib, schemathesis; pathlib.Path(${JSON.stringify(marker)}).write_text("ok")`]);
  return command;
}
