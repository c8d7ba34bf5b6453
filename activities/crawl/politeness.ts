/**
 * Politeness inside one worker: at most `perHost` requests at once to a host, at least `delayMs`
 * between two request starts to it, and a pause when a host answers with `Retry-After`.
 */

interface HostState {
  active: number;
  /** Earliest time the next request may start. */
  nextAt: number;
  waiters: Array<() => void>;
  timer?: NodeJS.Timeout;
}

export class HostGate {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly perHost: number,
    private readonly delayMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Waits for the host's turn; call the returned function when the request is done. */
  async enter(host: string, signal?: AbortSignal): Promise<() => void> {
    const state = this.state(host);
    while (!this.mayStart(state)) {
      if (signal?.aborted) throw new Error('aborted');
      await new Promise<void>((resolve) => {
        state.waiters.push(resolve);
        this.schedule(state);
      });
    }
    state.active++;
    state.nextAt = Math.max(state.nextAt, this.now() + this.delayMs);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.active--;
      this.wake(state);
      if (state.active === 0 && state.waiters.length === 0 && state.nextAt <= this.now()) this.hosts.delete(host);
    };
  }

  /** The host asked to come back later: nothing starts there before `ms` from now. */
  pause(host: string, ms: number): void {
    const state = this.state(host);
    state.nextAt = Math.max(state.nextAt, this.now() + ms);
  }

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { active: 0, nextAt: 0, waiters: [] };
      this.hosts.set(host, state);
    }
    return state;
  }

  private mayStart(state: HostState): boolean {
    return state.active < this.perHost && this.now() >= state.nextAt;
  }

  private wake(state: HostState): void {
    const waiters = state.waiters.splice(0);
    for (const waiter of waiters) waiter();
  }

  private schedule(state: HostState): void {
    if (state.timer) return;
    const wait = state.nextAt - this.now();
    if (wait <= 0) {
      if (state.active < this.perHost) queueMicrotask(() => this.wake(state));
      return;
    }
    state.timer = setTimeout(() => {
      state.timer = undefined;
      this.wake(state);
    }, wait);
    state.timer.unref();
  }
}
