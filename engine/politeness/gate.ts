/**
 * One host gate for the whole installation. Every request to a target (a Fetch, a Batch task, a crawl
 * page, a preparation's page, a robots.txt) passes it, in whichever process it runs:
 *
 *   turn in this process (FairTurns: the host's concurrency, accounts in rotation; at a governed
 *   host, the host's concurrency per account, the turns between accounts being the leases')
 *   └─ governed host? (a rate, a Crawl-delay or a back-off in force)
 *        ├─ wait out the back-off (host_state, read at most every second)
 *        ├─ take one of the host's leases (host_leases: its concurrency across processes); when
 *        │  they are all held, the requests waiting in every process take turns by account: each
 *        │  announces itself (host_turns), and a free lease goes to the waiting account that got
 *        │  one longest ago, so an account with requests in every process gets no more turns than
 *        │  one with a single request in one
 *        └─ take the next free start slot (host_slots, insert-only, unique per interval); woken
 *           too late for it, take another rather than crowd the next one
 *   fetch; then `done(answer)`: a 429/503 pauses the host that gave it for everyone (Retry-After,
 *   doubling on each in a row, at most HOST_BACKOFF_MAX_MS); a good answer after a pause steps the
 *   back-off down. Each hop of a redirect chain enters for its own host (engine/http/attempt.ts).
 *
 * Waiting never holds a caller's shared slots: every wait runs inside the caller's `park` (a Batch
 * task gives back its run's and the worker's slots for it), and a caller on the line gives a
 * `maxWaitMs` past which it is refused at once (HostWait) rather than kept waiting.
 *
 * A host with none of the three costs no database call: the common case of many hosts stays as fast
 * as before. Why the store rather than a workflow per busy host: a slot is one insert (about a
 * millisecond on the local FerretDB), where a Temporal update is a round trip through the history
 * service (tens of milliseconds) and grows the host's history with every request.
 */
import { randomUUID } from 'node:crypto';
import { FairTurns, TurnTimeout } from './fair';
import { GateKeys, type BudgetRules, type GateKey } from './keys';
import { retryAfterMs } from './retry-after';
import type { HostGateStore } from './store';

export interface HostGateOptions extends BudgetRules {
  backoffMaxMs: number;
  now?: () => number;
}

/** How the request went, for the gate's back-off. */
export interface GateAnswer {
  status: number;
  headers: ReadonlyArray<readonly [string, string]>;
  /** The URL that answered, when it is not the one that entered (a browser's redirects): its host is the one observed. */
  url?: string;
}

/**
 * Runs a wait of the caller's request: the caller gives back what it holds that others need (a Batch
 * task its run's and the worker's slots) and takes it again after.
 */
export type Park = <T>(wait: () => Promise<T>) => Promise<T>;

export interface GateEntry {
  /** Whose request: accounts take turns at a busy host. */
  account: string;
  signal?: AbortSignal;
  /** Longest the caller waits for the host, every wait together (a pause, a Crawl-delay, a rate, a full host); past it, HostWait at once. */
  maxWaitMs?: number;
  park?: Park;
}

export interface GateTicket {
  done(answer?: GateAnswer): void;
}

interface Policy {
  readAt: number;
  backoffUntil: number;
  level: number;
  delayMs: number;
}

const POLICY_FRESH_MS = 1_000;
const LEASE_MS = 60_000;
const SLOT_KEEP_MS = 60_000;
const SWEEP_EVERY_MS = 30_000;
/** Longest Crawl-delay honoured: a site asking for more still gets a request a minute. */
const CRAWL_DELAY_MAX_MS = 60_000;
const BACKOFF_BASE_MS = 1_000;
const LEASE_POLL_MS = 25;
/** A waiting request's announcement lasts this long unless renewed (its process died: others go on). */
const WAITER_MS = 2_000;
const WAITER_RENEW_MS = 600;
/** How long an account's last lease counts in the turns: long enough to outlast any queue of waiters. */
const SERVED_MS = 120_000;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The host's turn comes later than the caller would wait: `paused` after its 429/503 answers, `busy`
 * with requests (its concurrency, rate or Crawl-delay). `until`: when it is expected, if known.
 */
export class HostWait extends Error {
  readonly kind = 'host-wait';
  constructor(
    readonly host: string,
    readonly reason: 'paused' | 'busy',
    readonly until: number,
  ) {
    super(`${host} is ${reason} until ${new Date(until).toISOString()}`);
  }
}

export const isHostWait = (error: unknown): error is HostWait => typeof error === 'object' && error !== null && (error as { kind?: unknown }).kind === 'host-wait';

interface Entry extends GateEntry {
  /** Epoch ms past which the caller does not wait (Infinity: it waits). */
  deadline: number;
}

const unparked: Park = (wait) => wait();

export class HostGate {
  private readonly keys: GateKeys;
  private readonly now: () => number;
  private readonly turns = new Map<string, FairTurns>();
  private readonly policies = new Map<string, Policy>();
  private readonly reading = new Map<string, Promise<Policy>>();
  /** Last slot this process took per host and interval: where to look first. */
  private readonly lastSlot = new Map<string, { index: number; at: number }>();
  private lastSweep = 0;
  /** Back-offs this process started (metrics). */
  backoffsStarted = 0;

  constructor(
    private readonly store: HostGateStore,
    private readonly options: HostGateOptions,
  ) {
    this.keys = new GateKeys(options);
    this.now = options.now ?? Date.now;
  }

  /** Waits for the host's turn; call `done` with the answer (or without, on failure). Throws HostWait past the caller's wait. */
  async enter(url: string | URL, entry: GateEntry): Promise<GateTicket> {
    const releases: Array<() => void> = [];
    const keys = this.keys.of(typeof url === 'string' ? new URL(url) : url);
    const full: Entry = { ...entry, deadline: entry.maxWaitMs === undefined ? Infinity : this.now() + entry.maxWaitMs };
    try {
      const perAccount = this.governedNow(keys) ?? (await this.governed(keys));
      for (const key of keys) releases.push(this.enterFreeKey(key, full, perAccount) ?? (await this.enterKey(key, full, perAccount)));
    } catch (error) {
      for (const release of releases.reverse()) release();
      throw error;
    }
    const hostKey = keys[0]!;
    let finished = false;
    return {
      done: (answer) => {
        if (finished) return;
        finished = true;
        for (const release of releases.reverse()) release();
        if (!answer) return;
        // The answer counts against the host that gave it: a redirect's end is not its start.
        const answered = answer.url ? this.hostOf(answer.url) : hostKey.key;
        if (answered) void this.observe(answered, answer).catch(() => undefined);
      },
    };
  }

  private hostOf(url: string): string | undefined {
    try {
      return this.keys.of(new URL(url))[0]?.key;
    } catch {
      return undefined;
    }
  }

  /** A robots.txt's Crawl-delay for the host of `url`, shared with every process. */
  async crawlDelay(url: string, ms: number | undefined, validMs: number): Promise<void> {
    const host = new URL(url).host.toLowerCase();
    const wanted = Math.min(ms ?? 0, CRAWL_DELAY_MAX_MS);
    const policy = await this.policy(host);
    if (policy.delayMs === wanted) return;
    policy.delayMs = wanted;
    const now = this.now();
    await this.store.writeDelay(host, { ms: wanted, until: now + validMs }, now);
  }

  /** Hosts this process knows to be paused now (metrics; the admin command reads the store). */
  pausedHosts(): number {
    const now = this.now();
    let count = 0;
    for (const policy of this.policies.values()) if (policy.backoffUntil > now) count++;
    return count;
  }

  /**
   * Whether the request goes to a governed host (a rate on any of its keys, a Crawl-delay or a back-off
   * of its host): its concurrency is then the leases, shared by every process, where accounts take turns
   * across processes.
   */
  private async governed(keys: readonly GateKey[]): Promise<boolean> {
    if (keys.some((key) => key.budget.rate > 0)) return true;
    const host = keys.find((key) => key.host);
    if (!host) return false;
    const policy = await this.policy(host.key);
    return policy.delayMs > 0 || policy.backoffUntil > this.now();
  }

  /**
   * `governed` without a wait, when the answer is known from memory (no rate, and the host's policy
   * read less than a second ago); undefined when the store must be asked.
   */
  private governedNow(keys: readonly GateKey[]): boolean | undefined {
    if (keys.some((key) => key.budget.rate > 0)) return true;
    const host = keys.find((key) => key.host);
    if (!host) return false;
    const policy = this.freshPolicy(host.key);
    return policy ? policy.delayMs > 0 || policy.backoffUntil > this.now() : undefined;
  }

  /**
   * `enterKey`'s common case without a wait: the key's turns have one free and nothing governs the
   * key (no rate, and its policy, read less than a second ago, has neither a pause nor a Crawl-delay).
   * Undefined when the full path must run (nothing was taken then).
   */
  private enterFreeKey(key: GateKey, entry: Entry, perAccount: boolean): (() => void) | undefined {
    if (key.budget.rate > 0) return undefined;
    const policy = this.freshPolicy(key.key);
    if (!policy || (key.host && (policy.delayMs > 0 || policy.backoffUntil > this.now()))) return undefined;
    const turnsKey = perAccount ? `${key.key}\u0000${entry.account}` : key.key;
    const held = this.turns.get(turnsKey);
    const giveTurn = held?.tryTake();
    if (!held || !giveTurn) return undefined;
    return () => {
      giveTurn();
      if (held.idle && this.turns.get(turnsKey) === held) this.turns.delete(turnsKey);
    };
  }

  /**
   * `perAccount` (a governed host): each account gets up to the host's concurrency of requests to its
   * leases, so a flood of one account in this process does not keep another's request from the turns
   * there. Any other host's concurrency is this process's, accounts in rotation.
   */
  private async enterKey(key: GateKey, entry: Entry, perAccount: boolean): Promise<() => void> {
    const turnsKey = perAccount ? `${key.key}\u0000${entry.account}` : key.key;
    let turns = this.turns.get(turnsKey);
    if (!turns) {
      turns = new FairTurns(key.budget.concurrency);
      this.turns.set(turnsKey, turns);
    }
    const held = turns;
    const giveTurn = held.free ? await held.take(entry.account) : await this.waitTurn(key.key, held, entry);
    const release = (): void => {
      giveTurn();
      if (held.idle && this.turns.get(turnsKey) === held) this.turns.delete(turnsKey);
    };
    try {
      let policy = await this.policy(key.key);
      const interval = (): number => Math.max(key.budget.rate > 0 ? 1000 / key.budget.rate : 0, key.host ? policy.delayMs : 0);
      const paused = (): boolean => key.host && policy.backoffUntil > this.now();
      if (interval() === 0 && !paused()) return release;
      // A back-off may be stretched while we wait: look again when it ends.
      while (paused()) {
        if (policy.backoffUntil > entry.deadline) throw new HostWait(key.key, 'paused', policy.backoffUntil);
        const until = policy.backoffUntil;
        await (entry.park ?? unparked)(() => sleep(until - this.now(), entry.signal));
        policy = await this.policy(key.key);
      }
      // The lease first: a request that holds its slot is ready to start the moment the slot comes.
      const giveLease = await this.lease(key.key, key.budget.concurrency, entry);
      try {
        const every = Math.round(interval());
        for (let round = 0; every > 0; round++) {
          const at = await this.slot(key.key, every, entry.signal);
          if (at > entry.deadline) throw new HostWait(key.key, 'busy', at);
          if (at > this.now()) await (entry.park ?? unparked)(() => sleep(at - this.now(), entry.signal));
          // Woken late (a busy process): starting now would crowd the next slot's request, so take a later one.
          if (this.now() - at <= every / 2 || round >= 3) break;
        }
      } catch (error) {
        giveLease();
        throw error;
      }
      return () => {
        giveLease();
        release();
      };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The policy as last read, if that was less than POLICY_FRESH_MS ago. */
  private freshPolicy(key: string): Policy | undefined {
    const known = this.policies.get(key);
    return known && this.now() - known.readAt < POLICY_FRESH_MS ? known : undefined;
  }

  /** The host's back-off and Crawl-delay as the store says, read at most once a second per process. */
  private async policy(key: string): Promise<Policy> {
    const known = this.freshPolicy(key);
    if (known) return known;
    let reading = this.reading.get(key);
    if (!reading) {
      reading = this.readPolicy(key).finally(() => this.reading.delete(key));
      this.reading.set(key, reading);
    }
    return reading;
  }

  private async readPolicy(key: string): Promise<Policy> {
    const { backoff, delay } = await this.store.readState(key);
    const now = this.now();
    const policy: Policy = {
      readAt: now,
      backoffUntil: backoff?.until ?? 0,
      level: backoff?.level ?? 0,
      delayMs: delay && delay.until > now ? delay.ms : 0,
    };
    this.policies.set(key, policy);
    if (this.policies.size > 10_000) {
      for (const [name, old] of this.policies) if (now - old.readAt > POLICY_FRESH_MS) this.policies.delete(name);
    }
    return policy;
  }

  /** The next free start slot of the host at `every` ms apart, taken for this request: its time. */
  /**
   * Slots are the intervals of `every` ms since the epoch, one request start each. The slot under way
   * may be taken too (a host asked nothing for a while goes at once, a Crawl-delay's first request
   * included); a slot's start is its interval's or later, and never less than `every` after the start
   * of the slot before it (each records its start).
   */
  private async slot(key: string, every: number, signal?: AbortSignal): Promise<number> {
    this.sweep();
    const prefix = `${key}|${every}|`;
    const hintKey = `${key}|${every}`;
    const idOf = (index: number): string => `${prefix}${String(index).padStart(14, '0')}`;
    let index = Math.max(Math.floor(this.now() / every), (this.lastSlot.get(hintKey)?.index ?? -1) + 1);
    for (let tries = 0; ; tries++) {
      if (signal?.aborted) throw new Error('aborted');
      const hint = this.lastSlot.get(hintKey);
      const previous = hint?.index === index - 1 ? hint.at : await this.store.slotStart(idOf(index - 1));
      const at = Math.max(this.now(), index * every, previous === undefined ? 0 : previous + every);
      if (await this.store.takeSlot(idOf(index), at, at + SLOT_KEEP_MS)) {
        this.lastSlot.set(hintKey, { index, at });
        if (this.lastSlot.size > 10_000) this.lastSlot.clear();
        return at;
      }
      // Taken by another process: after two misses, ask where the taken slots end.
      if (tries >= 1) {
        const last = await this.store.lastSlot(prefix);
        const taken = last ? Number(last.slice(prefix.length)) : index;
        index = Math.max(index, taken) + 1;
      } else {
        index++;
      }
      if (tries > 1_000) throw new Error(`no start slot for ${key}`);
    }
  }

  /**
   * Waits for a turn in this process inside the caller's `park`, until its deadline at most: past it,
   * HostWait `busy`. The turns keep the deadline's timer themselves: half the requests of a host at its
   * concurrency wait here, and a signal built per wait cost more than the turn.
   */
  private async waitTurn(host: string, turns: FairTurns, entry: Entry): Promise<() => void> {
    const park = entry.park ?? unparked;
    const timeoutMs = entry.deadline === Infinity ? undefined : entry.deadline - this.now();
    try {
      return await park(() => turns.take(entry.account, entry.signal, timeoutMs));
    } catch (error) {
      if (error instanceof TurnTimeout) throw new HostWait(host, 'busy', entry.deadline);
      throw error;
    }
  }

  /**
   * Runs a wait of the caller's (a lease) inside its `park`, until its deadline at most: past it,
   * HostWait `busy`.
   */
  private async waiting<T>(host: string, entry: Entry, wait: (signal?: AbortSignal) => Promise<T>): Promise<T> {
    const park = entry.park ?? unparked;
    if (entry.deadline === Infinity) return park(() => wait(entry.signal));
    // One signal for the wait: the deadline's, which the caller's abort is forwarded to (AbortSignal.any
    // costs more per wait, and half the requests of a full host wait).
    const stop = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop.abort();
    }, Math.max(0, entry.deadline - this.now()));
    const caller = entry.signal;
    const onCallerAbort = (): void => stop.abort();
    caller?.addEventListener('abort', onCallerAbort, { once: true });
    if (caller?.aborted) stop.abort();
    try {
      return await park(() => wait(stop.signal));
    } catch (error) {
      if (timedOut && !caller?.aborted) throw new HostWait(host, 'busy', entry.deadline);
      throw error;
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    }
  }

  /**
   * One of the host's `size` leases, renewed while held; released by `_id` and token. When others wait
   * for one, this request takes one only in its account's turn (`nextAccount`); waiting is parked.
   */
  private async lease(key: string, size: number, entry: Entry): Promise<() => void> {
    this.sweep();
    const token = randomUUID();
    const ids = Array.from({ length: size }, (_, index) => `${key}|${index}`);
    const tryTake = async (): Promise<(() => void) | undefined> => {
      const first = Math.floor(Math.random() * size);
      for (let step = 0; step < size; step++) {
        const id = ids[(first + step) % size]!;
        if (!(await this.store.takeLease(id, token, this.now() + LEASE_MS))) continue;
        const renew = setInterval(() => {
          void this.store.renewLease(id, token, this.now() + LEASE_MS).catch(() => undefined);
        }, LEASE_MS / 3);
        renew.unref();
        const now = this.now();
        void this.store.markServed(key, entry.account, now, now + SERVED_MS).catch(() => undefined);
        return () => {
          clearInterval(renew);
          void this.store.releaseLease(id, token).catch(() => undefined);
        };
      }
      return undefined;
    };
    // A request that finds others waiting does not pass them: it takes its place in the turns.
    if ((await this.nextAccount(key, entry.account)) === entry.account) {
      const taken = await tryTake();
      if (taken) return taken;
    }
    const since = this.now();
    let announced = 0;
    const announce = async (): Promise<void> => {
      const now = this.now();
      if (now - announced < WAITER_RENEW_MS) return;
      announced = now;
      await this.store.announceWaiter(key, token, { account: entry.account, since }, now + WAITER_MS);
    };
    await announce();
    try {
      return await this.waiting(key, entry, async (signal) => {
        for (;;) {
          // Every lease held: those of a process that died expire.
          await this.store.expireLeases(ids, this.now());
          await sleep(LEASE_POLL_MS + Math.random() * LEASE_POLL_MS, signal);
          await announce();
          if ((await this.nextAccount(key, entry.account)) !== entry.account) continue;
          const lease = await tryTake();
          if (lease) return lease;
        }
      });
    } finally {
      void this.store.withdrawWaiter(key, token).catch(() => undefined);
    }
  }

  /**
   * Whose turn it is at the host among the accounts waiting in every process and `account`: the one
   * that got a lease longest ago (never, or not for SERVED_MS, first), then the one waiting longest.
   */
  private async nextAccount(key: string, account: string): Promise<string> {
    const now = this.now();
    const { waiting, served } = await this.store.turns(key, now);
    if (waiting.length === 0) return account;
    const since = new Map<string, number>([[account, now]]);
    for (const waiter of waiting) since.set(waiter.account, Math.min(since.get(waiter.account) ?? Infinity, waiter.since));
    let next = account;
    for (const candidate of since.keys()) {
      const order = (name: string): [number, number] => [served.get(name) ?? 0, since.get(name) ?? now];
      const [servedAt, waited] = order(candidate);
      const [bestServed, bestWaited] = order(next);
      if (servedAt < bestServed || (servedAt === bestServed && waited < bestWaited)) next = candidate;
    }
    return next;
  }

  /** Records what the host answered: 429/503 pause it for everyone; a good answer after a pause steps back. */
  private async observe(key: string, answer: GateAnswer): Promise<void> {
    const now = this.now();
    const policy = await this.policy(key);
    if (answer.status === 429 || answer.status === 503) {
      const level = Math.min(policy.level + 1, 20);
      const asked = retryAfterMs(answer.status, answer.headers, now);
      const pause = Math.min(this.options.backoffMaxMs, (asked ?? BACKOFF_BASE_MS) * 2 ** (level - 1));
      const until = Math.max(policy.backoffUntil, now + pause);
      Object.assign(policy, { level, backoffUntil: until });
      this.backoffsStarted++;
      await this.store.writeBackoff(key, { until, level, status: answer.status }, now);
      return;
    }
    if (policy.level > 0 && answer.status < 400 && policy.backoffUntil <= now) {
      policy.level--;
      await this.store.stepBackoff(key, policy.level, now);
    }
  }

  /** Deletes start slots long past (any process may; deleting twice is harmless). */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    void this.store.sweepSlots(now).catch(() => undefined);
    void this.store.sweepTurns(now).catch(() => undefined);
  }
}
