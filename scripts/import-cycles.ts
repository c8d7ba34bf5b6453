/**
 * Lint rule: no import cycles among the project's own modules. `npm test` runs it after ESLint; it
 * exits non-zero and prints every cycle it finds. Type-only imports count too: a cycle of types is
 * still two modules that cannot be understood one without the other.
 *
 *   npx tsx scripts/import-cycles.ts
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../base/config';

const FOLDERS = ['api', 'activities', 'core', 'engine', 'workflows', 'workers', 'scripts', 'test', 'bench'];
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function sources(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    const full = path.join(folder, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    if (statSync(full).isDirectory()) return sources(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

function resolve(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
}

/** Strongly connected components with more than one module, or a module importing itself (Tarjan). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function main(): number {
  const graph = new Map<string, string[]>();
  for (const file of FOLDERS.flatMap((folder) => sources(path.join(PROJECT_ROOT, folder)))) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(SPECIFIER)].flatMap((match) => resolve(file, match[1] ?? '') ?? []);
    graph.set(path.relative(PROJECT_ROOT, file), [...new Set(targets.map((target) => path.relative(PROJECT_ROOT, target)))]);
  }
  const found = cycles(graph);
  for (const component of found) console.error(`import cycle: ${component.join(' ↔ ')}`);
  if (found.length > 0) console.error(`[fetchplane] ${found.length} import cycle(s): break them (a shared module both sides import, or an injected dependency)`);
  return found.length > 0 ? 1 : 0;
}

if (require.main === module) process.exitCode = main();
