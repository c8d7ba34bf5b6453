/**
 * Renderers that want a core all the time are demoted to the lowest CPU priority. A page whose script
 * never yields keeps its renderer's main thread runnable for as long as its render lasts (up to the
 * render deadline); on a small machine two of them leave every other render, whatever its account, a
 * fraction of the CPU. The page share (slots.ts) bounds how many pages an account holds; this bounds
 * what those pages take from the others.
 *
 * While a page of the pool has been open for longer than `afterMs`, the pool looks at its renderer
 * processes every LOOK_MS: a renderer whose main thread was running or waiting to run for at least
 * BUSY_SHARE of the time since the last look, LOOKS_BUSY looks in a row, gets nice 19 on every thread
 * (the kernel then gives it what the others leave, and nothing is taken from it on an idle machine).
 * Runnable time is read from /proc/<pid>/schedstat (on the CPU plus waiting for it), so a spinning page
 * is seen as busy however loaded the machine is. A renderer is per site and context, so this is the
 * busy page's, and with context reuse the same account's later pages of that site, until it exits: an
 * unprivileged process cannot raise a priority back. Ordinary pages are runnable for tens of
 * milliseconds at a time and are never touched.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Logger } from '../../base/log';
import { kindOf } from './processes';

const LOOK_MS = 1_000;
const BUSY_SHARE = 0.8;
const LOOKS_BUSY = 2;
const LOWEST = 19;

/** Nanoseconds the process's main thread has been on a CPU or waiting for one; undefined once gone. */
function runnableNs(pid: number): number | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return (run ?? 0) + (wait ?? 0);
  } catch {
    return undefined;
  }
}

/** Gives every thread of `pid` the lowest priority; false when the process is gone or not ours. */
function lowestPriority(pid: number): boolean {
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) setPriority(Number(task), LOWEST);
    return true;
  } catch {
    return false;
  }
}

export class BusyRenderers {
  private timer: NodeJS.Timeout | undefined;
  /** Pages open for longer than `afterMs` now. */
  private long = 0;
  private lastAt = 0;
  private seen = new Map<string, { runnable: number; busy: number }>();
  private readonly demoted = new Set<string>();
  private demotedCount = 0;

  constructor(
    private readonly options: {
      /** The pool's browsers' processes now (processes.ts `sessionProcesses`). */
      processes: () => Array<{ pid: number; start: number; leader: boolean }>;
      /** How long a page is open before its renderer is looked at. */
      afterMs: number;
      log?: Logger;
    },
  ) {}

  /** Renderers demoted so far. */
  get count(): number {
    return this.demotedCount;
  }

  /** A page was opened: once it is still open after `afterMs`, renderers are looked at; call the result when it closes. */
  pageOpened(): () => void {
    let long = false;
    const timer = setTimeout(() => {
      long = true;
      if (this.long++ === 0) this.start();
    }, this.options.afterMs).unref();
    return () => {
      clearTimeout(timer);
      if (long && --this.long === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.seen.clear();
  }

  private start(): void {
    this.lastAt = performance.now();
    this.look();
    this.timer = setInterval(() => this.look(), LOOK_MS).unref();
  }

  private look(): void {
    const now = performance.now();
    const elapsedNs = (now - this.lastAt) * 1e6;
    this.lastAt = now;
    const next = new Map<string, { runnable: number; busy: number }>();
    const processes = this.options.processes();
    for (const process of processes) {
      const key = `${process.pid}:${process.start}`;
      if (process.leader || this.demoted.has(key)) continue;
      const runnable = runnableNs(process.pid);
      if (runnable === undefined) continue;
      const before = this.seen.get(key);
      const busy = before && elapsedNs > 0 && (runnable - before.runnable) / elapsedNs >= BUSY_SHARE ? before.busy + 1 : 0;
      next.set(key, { runnable, busy });
      if (busy >= LOOKS_BUSY && kindOf(process.pid) === 'renderer' && lowestPriority(process.pid)) {
        this.demoted.add(key);
        this.demotedCount++;
        this.options.log?.info('renderer demoted: it kept a core busy', { pid: process.pid });
      }
    }
    this.seen = next;
    // Demoted processes that are gone are forgotten.
    const alive = new Set(processes.map((process) => `${process.pid}:${process.start}`));
    for (const key of this.demoted) if (!alive.has(key)) this.demoted.delete(key);
  }
}
