/**
 * Official Python clients from PyPI, installed once into virtualenvs in the git-ignored STACK_DIR (as
 * the Temporal CLI is): the tests drive our API with them, the base URL changed and nothing else. A
 * missing python3 or a failed install fails the tests that need it: they are not skipped.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { processConfig } from '../../base/config';

export const PYTHON_CLIENT_VERSION = '1.11.0';

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}${result.error ? String(result.error) : ''}`);
}

/** The virtualenv's python, with `zenrows==PYTHON_CLIENT_VERSION` installed. */
export function pythonWithClient(): string {
  const venv = path.join(processConfig().stackDir, `zenrows-python-${PYTHON_CLIENT_VERSION}`);
  const python = path.join(venv, 'bin', 'python');
  const marker = path.join(venv, '.installed');
  if (existsSync(marker)) return python;
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `zenrows==${PYTHON_CLIENT_VERSION}`]);
  run(python, ['-c', `import pathlib, zenrows.batch; pathlib.Path(${JSON.stringify(marker)}).write_text("ok")`]);
  return python;
}
