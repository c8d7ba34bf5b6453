/**
 * Supervision of the local stack: a component that exits after it was ready, unasked, is started
 * again after a pause that doubles with each failure (1 s, 2 s, 4 s ... up to 30 s), with a line saying
 * what died and when it came back. A restart that does not come back counts as another failure. More
 * than `restartLimit` failures of one component within `windowMs` and the supervisor gives up: the
 * owner (the launcher) stops everything and shows the component's last lines.
 *
 * Deliberate stops are left alone: a component stopped or killed through its ManagedProcess is not
 * `wanted`, and one started again by someone else meanwhile is `busy`.
 */
import { describeExit, type ManagedProcess } from './process';

export interface SupervisionPolicy {
  /** Failures of one component tolerated within the window; one more and the supervisor gives up. */
  restartLimit: number;
  windowMs: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export interface SupervisorOptions<Name extends string> {
  policy: SupervisionPolicy;
  /** Starts the component again and resolves once it is ready. */
  restart: (name: Name) => Promise<void>;
  report: (line: string) => void;
  /** Called once when a component failed too often; supervision is off from then on. */
  giveUp: (name: Name, reason: string) => void;
}

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 23);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export class Supervisor<Name extends string> {
  private active = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly failures = new Map<Name, number[]>();

  constructor(private readonly options: SupervisorOptions<Name>) {}

  watch(name: Name, component: ManagedProcess): void {
    component.onCrash((exit) => this.failed(name, component, `exited unexpectedly (${describeExit(exit)})`, Date.now()));
  }

  /** Turns supervision on (the stack starts). */
  resume(): void {
    this.active = true;
  }

  /** Turns supervision off and drops pending restarts (the stack stops). */
  halt(): void {
    this.active = false;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private failed(name: Name, component: ManagedProcess, what: string, downSince: number): void {
    if (!this.active || !component.wanted) return;
    const { restartLimit, windowMs, firstDelayMs = 1_000, maxDelayMs = 30_000 } = this.options.policy;
    const now = Date.now();
    const recent = [...(this.failures.get(name) ?? []).filter((at) => now - at < windowMs), now];
    this.failures.set(name, recent);
    if (recent.length > restartLimit) {
      this.options.report(`${name} ${what} at ${clock(now)}: ${recent.length} failures within ${seconds(windowMs)}, giving up`);
      this.halt();
      this.options.giveUp(name, `${name} failed ${recent.length} times within ${seconds(windowMs)}`);
      return;
    }
    const delay = Math.min(firstDelayMs * 2 ** (recent.length - 1), maxDelayMs);
    this.options.report(`${name} ${what} at ${clock(now)}; restarting it in ${seconds(delay)}`);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.restart(name, component, downSince);
    }, delay);
    this.timers.add(timer);
  }

  private async restart(name: Name, component: ManagedProcess, downSince: number): Promise<void> {
    if (!this.active || !component.wanted || component.busy) return;
    try {
      await this.options.restart(name);
      if (this.active) this.options.report(`${name} back at ${clock(Date.now())} (pid ${component.pid}), ${seconds(Date.now() - downSince)} after it went down`);
    } catch (error) {
      const reason = ((error as Error).message ?? String(error)).split('\n')[0];
      this.failed(name, component, `did not come back (${reason})`, downSince);
    }
  }
}
