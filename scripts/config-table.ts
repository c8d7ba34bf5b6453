/**
 * The README's configuration table, generated from the config module. `--write` rewrites the table
 * between the README's config markers; without it the table is printed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES, PROJECT_ROOT } from '../base/config';

const START = '<!-- config-table:start -->';
const END = '<!-- config-table:end -->';
const scopes: Record<string, string> = { all: 'API, worker', api: 'API', worker: 'worker', launcher: 'local launcher' };

export function configTable(): string {
  const lines = ['| Variable | Default | Used by | Meaning |', '|---|---|---|---|'];
  for (const variable of CONFIG_VARIABLES) {
    const fallback = variable.fallback === undefined ? '(unset)' : variable.fallback === '' ? '(empty)' : `\`${variable.fallback}\``;
    lines.push(`| \`${variable.name}\` | ${fallback} | ${scopes[variable.scope] ?? variable.scope} | ${variable.description.replace(/\|/g, '\\|')} |`);
  }
  return lines.join('\n');
}

/** The README's table as it stands, or undefined when the markers are missing. */
export function readmeTable(readme: string): string | undefined {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  return start < 0 || end < start ? undefined : readme.slice(start + START.length, end).trim();
}

if (require.main === module) {
  const file = path.join(PROJECT_ROOT, 'README.md');
  if (process.argv.includes('--write')) {
    const readme = readFileSync(file, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    if (start < 0 || end < start) throw new Error(`README.md lacks the ${START} … ${END} markers`);
    writeFileSync(file, `${readme.slice(0, start + START.length)}\n${configTable()}\n${readme.slice(end)}`);
  } else {
    process.stdout.write(configTable() + '\n');
  }
}
