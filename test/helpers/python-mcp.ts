/**
 * The Python `mcp` package from PyPI, a second MCP client independent of the TypeScript SDK, installed
 * once into a virtualenv in the git-ignored STACK_DIR (as the Temporal CLI is). A missing python3 or a
 * failed install fails the tests that need it: they are not skipped. `runPythonClient` runs
 * test/mcp/python_client.py with it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { processConfig } from '../../base/config';

export const PYTHON_MCP_VERSION = '2.3.0';

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}${result.error ? String(result.error) : ''}`);
}

/** The virtualenv's python, with `mcp==PYTHON_MCP_VERSION` installed. */
export function pythonWithMcp(): string {
  const venv = path.join(processConfig().stackDir, `mcp-python-${PYTHON_MCP_VERSION}`);
  const python = path.join(venv, 'bin', 'python');
  const marker = path.join(venv, '.installed');
  if (existsSync(marker)) return python;
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `mcp==${PYTHON_MCP_VERSION}`]);
  run(python, ['-c', `import pathlib, mcp; pathlib.Path(${JSON.stringify(marker)}).write_text("ok")`]);
  return python;
}

export interface PythonReport {
  tools: string[];
  page: { isError: boolean; type: string; text?: string };
  screenshot: { isError: boolean; type: string; mimeType?: string; head?: string };
  refused: { isError: boolean; type: string; text?: string };
}

/** Runs test/mcp/python_client.py with `job` on its stdin and parses what it prints. */
export async function runPythonClient(job: Record<string, unknown>): Promise<PythonReport> {
  const child = spawn(pythonWithMcp(), [path.join(__dirname, '../mcp/python_client.py')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdin.end(JSON.stringify(job));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the Python client exited ${String(code)}: ${err.slice(-2000)}`);
  return JSON.parse(out) as PythonReport;
}
