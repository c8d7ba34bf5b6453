/**
 * Chromium's processes as seen in /proc. Each browser is started with an environment variable carrying
 * its own id; every process it starts inherits it, the helpers that detach into their own session (the
 * crash handler) included. That is how the pool finds, measures and, at the end, makes sure it leaves
 * none of its processes behind, without ever touching a Chromium some other program started.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Name of the variable that marks a browser's processes. */
export const BROWSER_MARK = 'FETCHPLANE_BROWSER_ID';

function stateOf(pid: number): { state: string; session: number } | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '?', session: Number(fields[3]) };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
      .map(Number);
  } catch {
    return [];
  }
}

export interface MarkedProcess {
  pid: number;
  mark: string;
  /** The browser's main process: the leader of the session playwright started it in. */
  leader: boolean;
}

/** Live (not zombie) processes carrying one of `marks`. */
export function markedProcesses(marks: ReadonlySet<string>): MarkedProcess[] {
  if (marks.size === 0) return [];
  const found: MarkedProcess[] = [];
  const prefix = `${BROWSER_MARK}=`;
  for (const pid of allPids()) {
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    const at = environ.indexOf(prefix);
    if (at < 0) continue;
    const end = environ.indexOf('\0', at);
    const mark = environ.slice(at + prefix.length, end < 0 ? undefined : end);
    if (!marks.has(mark)) continue;
    const stat = stateOf(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') continue;
    found.push({ pid, mark, leader: stat.session === pid });
  }
  return found;
}

/** Resident memory of the given processes together, in bytes (processes gone meanwhile count 0). */
export function residentBytes(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU time used so far by one process (user + system), in seconds; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Sends SIGKILL to each pid that still exists; returns how many were signalled. */
export function killPids(pids: readonly number[]): number {
  let signalled = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
      signalled++;
    } catch {
      // already gone
    }
  }
  return signalled;
}
