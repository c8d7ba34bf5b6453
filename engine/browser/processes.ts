/**
 * Chromium's processes as seen in /proc. Each browser is started with an environment variable carrying
 * its own id. Only the main process and the crash handlers (which detach into sessions of their own)
 * keep it readable: every other helper (zygotes, renderers, GPU, network service) rewrites its process
 * title over the memory `/proc/<pid>/environ` shows. Those are found by session instead: playwright
 * starts the browser as the leader of a new session and the helpers stay in it. A session id stays
 * reserved while any process carries it, so the number cannot be taken by something else meanwhile;
 * a leader's start time tells a reused pid apart once the whole session is gone.
 *
 * That is how the pool finds, measures and, at the end, makes sure it leaves none of its processes
 * behind, without ever touching a Chromium some other program started.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Name of the variable that marks a browser's processes. */
export const BROWSER_MARK = 'FETCHPLANE_BROWSER_ID';

interface Stat {
  state: string;
  ppid: number;
  session: number;
  /** Start time, in clock ticks after boot. */
  start: number;
  /** CPU seconds of the process itself (user + system). */
  cpu: number;
  /** CPU seconds of its children it has waited for. */
  reaped: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    // Fields 3, 4, 6, 14-17 and 22 of stat (clock ticks are 100 per second on Linux).
    return {
      state: fields[0] ?? '?',
      ppid: Number(fields[1]),
      session: Number(fields[3]),
      cpu: (Number(fields[11]) + Number(fields[12])) / 100,
      reaped: (Number(fields[13]) + Number(fields[14])) / 100,
      start: Number(fields[19]),
    };
  } catch {
    return undefined;
  }
}

function markOf(pid: number): string | undefined {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
  const prefix = `${BROWSER_MARK}=`;
  const at = environ.indexOf(prefix);
  if (at < 0) return undefined;
  const end = environ.indexOf('\0', at);
  return environ.slice(at + prefix.length, end < 0 ? undefined : end);
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

/** Main process of each browser seen so far, by mark: how its helpers are found, even after it died. */
const leaders = new Map<string, { pid: number; start: number }>();

export interface MarkedProcess {
  pid: number;
  mark: string;
  /** The browser's main process: the leader of the session playwright started it in. */
  leader: boolean;
  ppid: number;
  /** CPU seconds used so far by the process, and by its children it has waited for. */
  cpu: number;
  reaped: number;
  start: number;
  zombie: boolean;
}

/** Live processes of the browsers carrying one of `marks` (with `zombies`, also the exited ones not yet waited for). */
export function markedProcesses(marks: ReadonlySet<string>, options: { zombies?: boolean } = {}): MarkedProcess[] {
  if (marks.size === 0) return [];
  const stats = new Map<number, Stat>();
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (stat) stats.set(pid, stat);
  }
  const sessions = new Map<number, string>();
  for (const mark of marks) {
    const known = leaders.get(mark);
    if (!known) continue;
    const now = stats.get(known.pid);
    // The leader's pid was given to another process: its session (and ours with it) is gone.
    if (now && now.start !== known.start) leaders.delete(mark);
    else sessions.set(known.pid, mark);
  }
  const found: MarkedProcess[] = [];
  const add = (pid: number, stat: Stat, mark: string): void => {
    const zombie = stat.state === 'Z' || stat.state === 'X';
    if (zombie && !options.zombies) return;
    found.push({ pid, mark, leader: stat.session === pid, ppid: stat.ppid, cpu: stat.cpu, reaped: stat.reaped, start: stat.start, zombie });
  };
  const pending: Array<[number, Stat]> = [];
  for (const [pid, stat] of stats) {
    if (sessions.has(stat.session)) continue;
    const mark = markOf(pid);
    if (mark === undefined || !marks.has(mark)) continue;
    if (stat.session === pid && !leaders.has(mark)) {
      leaders.set(mark, { pid, start: stat.start });
      sessions.set(pid, mark);
    } else {
      // Crash handlers: marked, in sessions of their own.
      pending.push([pid, stat]);
    }
  }
  for (const [pid, stat] of stats) {
    const mark = sessions.get(stat.session);
    if (mark !== undefined) add(pid, stat, mark);
  }
  for (const [pid, stat] of pending) add(pid, stat, markOf(pid) ?? '');
  // A browser whose every process is gone is forgotten: nothing of it can come back.
  for (const mark of marks) {
    const known = leaders.get(mark);
    if (known && !stats.has(known.pid) && !found.some((process) => process.mark === mark)) leaders.delete(mark);
  }
  return found;
}

/**
 * Live processes of the sessions led by `leaders` (browsers' main processes): a browser's helpers, found
 * from /proc stat alone (no environment read), for looks that are repeated while pages render.
 */
export function sessionProcesses(leaders: ReadonlySet<number>): Array<{ pid: number; start: number; leader: boolean }> {
  if (leaders.size === 0) return [];
  const found: Array<{ pid: number; start: number; leader: boolean }> = [];
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (stat && leaders.has(stat.session) && stat.state !== 'Z' && stat.state !== 'X') found.push({ pid, start: stat.start, leader: stat.session === pid });
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
  return readStat(pid)?.cpu ?? 0;
}

/**
 * CPU used by the processes of some browsers over a stretch of time, from samples of /proc (for
 * benchmarks). A process that exits is waited for by its parent, whose `reaped` figure then holds all
 * of its CPU: it is counted there when its parent was seen after it, or in this process's own figure
 * for the browsers it started itself. Only a process whose parent exited first loses what it used after
 * its last sample. Call `sample()` often (every 50-100 ms).
 */
export class CpuMeter {
  private readonly seen = new Map<string, { pid: number; ppid: number; kind: string; cpu: number; reaped: number; last: number; initial: number }>();
  private readonly ownReaped: number;
  private samples = 0;

  constructor(private readonly marks: () => ReadonlySet<string>) {
    this.ownReaped = readStat(process.pid)?.reaped ?? 0;
    this.sample();
  }

  /** Takes a sample; returns the live (non-zombie) processes it saw. */
  sample(): MarkedProcess[] {
    const round = this.samples++;
    const processes = markedProcesses(this.marks(), { zombies: true });
    for (const process of processes) {
      const key = `${process.pid}:${process.start}`;
      const entry = this.seen.get(key);
      if (entry) {
        entry.cpu = Math.max(entry.cpu, process.cpu);
        entry.reaped = Math.max(entry.reaped, process.reaped);
        entry.last = round;
      } else {
        // What a process had used before the first sample is not part of the measurement.
        const initial = round === 0 ? process.cpu + process.reaped : 0;
        const kind = process.leader ? 'browser' : kindOf(process.pid);
        this.seen.set(key, { pid: process.pid, ppid: process.ppid, kind, cpu: process.cpu, reaped: process.reaped, last: round, initial });
      }
    }
    return processes.filter((process) => !process.zombie);
  }

  /** CPU seconds of the browsers' processes since the meter was made (takes a last sample first). */
  seconds(): number {
    return Object.values(this.byKind()).reduce((sum, value) => sum + value, 0);
  }

  /**
   * The same, by kind of process: `browser` (main process), `renderer`, `gpu`, `network`, `zygote`,
   * `utility`, `crashpad`. What a parent waited for counts for its children: a zygote's for renderers.
   */
  byKind(): Record<string, number> {
    this.sample();
    const final = this.samples - 1;
    const lastSeen = new Map<number, number>();
    for (const entry of this.seen.values()) lastSeen.set(entry.pid, Math.max(lastSeen.get(entry.pid) ?? -1, entry.last));
    // The browsers this process started and waited for, with all they had waited for themselves.
    const kinds: Record<string, number> = { browser: (readStat(process.pid)?.reaped ?? 0) - this.ownReaped };
    const add = (kind: string, seconds: number): void => {
      kinds[kind] = (kinds[kind] ?? 0) + seconds;
    };
    for (const entry of this.seen.values()) {
      const gone = entry.last < final;
      // Waited for by this process (counted above) or by a parent sampled after it exited: the parent's
      // figure holds all of it, what it had used before the first sample included.
      const absorbed = gone && (entry.ppid === process.pid || (lastSeen.get(entry.ppid) ?? -1) > entry.last);
      if (absorbed) {
        add(entry.kind, -entry.initial);
        continue;
      }
      add(entry.kind, entry.cpu - entry.initial);
      if (entry.reaped > 0) add(entry.kind === 'zygote' ? 'renderer' : entry.kind, entry.reaped);
    }
    return kinds;
  }
}

/** What a helper process is, from its command line (rewritten by Chromium into one string). */
export function kindOf(pid: number): string {
  let command: string;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return 'gone';
  }
  const type = /--type=([a-z-]+)/.exec(command)?.[1];
  if (!type) return command.includes('crashpad') ? 'crashpad' : 'browser';
  if (type === 'gpu-process') return 'gpu';
  if (type === 'utility') return /NetworkService/.test(command) ? 'network' : 'utility';
  return type;
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
