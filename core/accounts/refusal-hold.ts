/**
 * Holding the refusals of a client network that is over its failed-key limit (auth-failures.ts) for
 * AUTH_FAILURE_HOLD_MS before they are answered. A refusal costs the database nothing, but it still
 * costs the API its HTTP handling: a client guessing keys over a few keep-alive connections got its
 * 429s back in about a millisecond and sent the next at once, thousands a second (bench/fairness.ts
 * `keys`: 5,000/s took 43% of a core of the API and the other tenants' p99 went 4.7 times up). Held for a second, a client
 * that waits for its answers sends at most one request a second per connection, whatever its speed.
 *
 * What is held is bounded, and a held refusal holds nothing shared (no slot, no budget, no database
 * turn: only its own socket and a queue entry): at most AUTH_FAILURE_HOLDS_PER_NETWORK per network and
 * MAX_HELD in all, in each API process. A refusal past either is answered at once, and every such refusal ends its connection
 * (authenticate.ts), so a client that opens more connections than it may have held pays a new
 * connection for each of the rest. The delay is the same for every refusal, so the queue is in due
 * order and one timer serves all of it.
 */

export interface RefusalHoldLimits {
  /** How long a refusal is held; 0 answers at once. */
  holdMs: number;
  /** Refusals held at once for one client network. */
  perNetwork: number;
}

/** Refusals held at once by this process in all (a socket and a queue entry each). */
export const MAX_HELD = 1_000;

interface Held {
  due: number;
  network: string;
  release: () => void;
}

export class RefusalHold {
  private readonly queue: Held[] = [];
  /** Index of the queue's head (entries before it are answered; the array is compacted now and then). */
  private head = 0;
  private readonly byNetwork = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /** Refusals held so far, and answered at once because the network or the process held as many as it may (for /metrics). */
  readonly counts = { held: 0, overflow: 0 };

  constructor(private readonly limits: RefusalHoldLimits) {}

  /** Refusals held now. */
  get holding(): number {
    return this.queue.length - this.head;
  }

  /**
   * Waits out the hold of one refusal of `network`: `held` once it is over, or `full` at once when the
   * network or the process holds as many refusals as it may (or holding is off).
   */
  hold(network: string): Promise<'held' | 'full'> {
    const ofNetwork = this.byNetwork.get(network) ?? 0;
    if (this.limits.holdMs <= 0 || ofNetwork >= this.limits.perNetwork || this.holding >= MAX_HELD) {
      this.counts.overflow++;
      return Promise.resolve('full');
    }
    this.counts.held++;
    this.byNetwork.set(network, ofNetwork + 1);
    return new Promise((resolve) => {
      this.queue.push({ due: Date.now() + this.limits.holdMs, network, release: () => resolve('held') });
      if (!this.timer) this.arm();
    });
  }

  private arm(): void {
    const next = this.queue[this.head];
    if (!next) return;
    this.timer = setTimeout(() => this.releaseDue(), Math.max(0, next.due - Date.now()));
    // A held refusal never keeps the process alive: at shutdown its connection is closed anyway.
    this.timer.unref();
  }

  private releaseDue(): void {
    this.timer = undefined;
    const now = Date.now();
    for (let entry = this.queue[this.head]; entry && entry.due <= now; entry = this.queue[this.head]) {
      this.head++;
      const left = (this.byNetwork.get(entry.network) ?? 1) - 1;
      if (left > 0) this.byNetwork.set(entry.network, left);
      else this.byNetwork.delete(entry.network);
      entry.release();
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1_024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.arm();
  }
}
