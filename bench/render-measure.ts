/**
 * Memory and CPU of groups of processes, sampled from /proc while work runs (bench/render.ts): each
 * group is a set of root processes with all their descendants, split into Node and Chromium by kind.
 * Memory is PSS (pages shared between processes counted once in the sum) and its anonymous part
 * (what the processes allocated themselves: unlike file pages, it does not depend on how many other
 * processes on the machine map the same binaries).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { cpuSeconds, memoryOf, processKind, processTree } from '../scripts/stack/proc';

export interface Sample {
  /** PSS, anonymous PSS and processes by part: `<group> node` and `chromium <kind>` (renderer, gpu-process...). */
  parts: Map<string, { pss: number; anon: number; processes: number }>;
  pss: number;
  anon: number;
  chromiumProcesses: number;
}

/** One look at the groups: every process of `roots[group]` and its descendants. */
export function sample(roots: Record<string, Array<number | undefined>>): Sample {
  const parts = new Map<string, { pss: number; anon: number; processes: number }>();
  let chromiumProcesses = 0;
  for (const [group, pids] of Object.entries(roots)) {
    for (const pid of pids.flatMap((root) => (root === undefined ? [] : processTree(root)))) {
      const kind = processKind(pid);
      if (!kind) continue;
      const part = kind.chromium ? `chromium ${kind.name}` : `${group} ${kind.name}`;
      if (kind.chromium) chromiumProcesses++;
      const memory = memoryOf(pid);
      const sum = parts.get(part) ?? { pss: 0, anon: 0, processes: 0 };
      parts.set(part, { pss: sum.pss + memory.pss, anon: sum.anon + memory.anon, processes: sum.processes + 1 });
    }
  }
  const total = (field: 'pss' | 'anon'): number => [...parts.values()].reduce((sum, part) => sum + part[field], 0);
  return { parts, pss: total('pss'), anon: total('anon'), chromiumProcesses };
}

/** Runs `work` while sampling every 100 ms; the sample with the highest PSS in all is the peak. */
export async function peakDuring<T>(roots: () => Record<string, Array<number | undefined>>, work: () => Promise<T>): Promise<{ result: T; peak: Sample }> {
  let peak = sample(roots());
  const look = (): void => {
    const now = sample(roots());
    if (now.pss > peak.pss) peak = now;
  };
  const timer = setInterval(look, 100);
  try {
    const result = await work();
    look();
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

/** PSS of the Chromium parts of a sample. */
export const chromiumOf = (sampled: Sample, field: 'pss' | 'anon' = 'pss'): number =>
  [...sampled.parts].filter(([part]) => part.startsWith('chromium')).reduce((sum, [, memory]) => sum + memory[field], 0);

/** CPU seconds used so far by the processes of the groups (descendants included). */
export function cpuOf(roots: Array<number | undefined>): number {
  return roots.flatMap((root) => (root === undefined ? [] : processTree(root))).reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/**
 * The baseline: bench/playwright-baseline.mjs in a bare Node process, one Chromium, a fresh context per
 * page; its peak over the run (Node and Chromium), sampled as the service is.
 */
export async function baselinePeak(options: { executablePath: string; urls: string[]; concurrency: number; viewport: { width: number; height: number } }): Promise<{ peak: Sample; ok: number; seconds: number }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'playwright-baseline.mjs'), JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const { peak, result: code } = await peakDuring(() => ({ baseline: [child.pid] }), () => exited);
  const done = /done (\d+) ([\d.]+)/.exec(output);
  if (code !== 0 || !done) throw new Error(`the Playwright baseline failed (exit ${code}): ${output}`);
  return { peak, ok: Number(done[1]), seconds: Number(done[2]) };
}

export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** `a–b` of numbers printed with `digits` decimals, or the one number when they agree. */
export function range(values: number[], digits = 2): string {
  const low = Math.min(...values).toFixed(digits);
  const high = Math.max(...values).toFixed(digits);
  return low === high ? low : `${low}–${high}`;
}
