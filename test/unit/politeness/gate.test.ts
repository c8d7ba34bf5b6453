/**
 * The host gate's rules on a store kept in memory (the database's implementation, core/politeness/store.ts,
 * is exercised by the stack suites): slots that let a quiet host go at once and keep every start a
 * Crawl-delay apart, waits run inside the caller's park, a caller's longest wait, answers counted
 * against the host that gave them, and turns between accounts that hold across processes (gates).
 */
import { expect } from 'chai';
import { HostGate, isHostWait, type HostGateStore, type HostState, type HostTurns, type HostWaiter, type Park } from '../../../engine/politeness';

class MemoryGateStore implements HostGateStore {
  readonly slots = new Map<string, number>();
  readonly leases = new Map<string, string>();
  readonly backoffs = new Map<string, { until: number; level: number; status: number }>();
  readonly delays = new Map<string, { ms: number; until: number }>();

  async readState(host: string): Promise<HostState> {
    const backoff = this.backoffs.get(host);
    const delay = this.delays.get(host);
    return { ...(backoff ? { backoff } : {}), ...(delay ? { delay } : {}) };
  }
  async writeBackoff(host: string, backoff: { until: number; level: number; status: number }): Promise<void> {
    this.backoffs.set(host, backoff);
  }
  async stepBackoff(host: string, level: number): Promise<void> {
    const backoff = this.backoffs.get(host);
    if (level === 0) this.backoffs.delete(host);
    else if (backoff) backoff.level = level;
  }
  async writeDelay(host: string, delay: { ms: number; until: number }): Promise<void> {
    this.delays.set(host, delay);
  }
  async takeSlot(id: string, at: number): Promise<boolean> {
    if (this.slots.has(id)) return false;
    this.slots.set(id, at);
    return true;
  }
  async slotStart(id: string): Promise<number | undefined> {
    return this.slots.get(id);
  }
  async lastSlot(prefix: string): Promise<string | undefined> {
    return [...this.slots.keys()].filter((id) => id.startsWith(prefix)).sort().pop();
  }
  async sweepSlots(): Promise<void> {}
  async takeLease(id: string, token: string): Promise<boolean> {
    if (this.leases.has(id)) return false;
    this.leases.set(id, token);
    return true;
  }
  async renewLease(): Promise<void> {}
  async releaseLease(id: string, token: string): Promise<void> {
    if (this.leases.get(id) === token) this.leases.delete(id);
  }
  async expireLeases(): Promise<void> {}
  readonly waiters = new Map<string, { host: string; waiter: HostWaiter; expiresAt: number }>();
  readonly served = new Map<string, { host: string; account: string; at: number; expiresAt: number }>();
  async announceWaiter(host: string, token: string, waiter: HostWaiter, expiresAt: number): Promise<void> {
    this.waiters.set(token, { host, waiter, expiresAt });
  }
  async withdrawWaiter(_host: string, token: string): Promise<void> {
    this.waiters.delete(token);
  }
  async turns(host: string, now: number): Promise<HostTurns> {
    const waiting = [...this.waiters.values()].filter((entry) => entry.host === host && entry.expiresAt > now).map((entry) => entry.waiter);
    const served = new Map([...this.served.values()].filter((entry) => entry.host === host && entry.expiresAt > now).map((entry) => [entry.account, entry.at] as const));
    return { waiting, served };
  }
  async markServed(host: string, account: string, at: number, expiresAt: number): Promise<void> {
    this.served.set(`${host}|${account}`, { host, account, at, expiresAt });
  }
  async sweepTurns(): Promise<void> {}
}

/** A gate whose clock stands still at `at`: its schedule is exact (its waits still take real time). */
const gateOf = (store: HostGateStore, at: number) => new HostGate(store, { defaults: { rate: 0, concurrency: 4 }, named: [], backoffMaxMs: 60_000, now: () => at });

describe('host gate, with its store in memory', () => {
  it('lets a Crawl-delayed host’s first request go at once and keeps every start the delay apart', async () => {
    const store = new MemoryGateStore();
    // Between two boundaries of the delay's grid: the first request must not wait for the next one.
    const now = 1_000_000_000_075;
    const gate = gateOf(store, now);
    const url = 'http://quiet.example/a';
    await gate.crawlDelay(url, 150, 60_000);
    for (let n = 0; n < 3; n++) (await gate.enter(url, { account: 'a' })).done({ status: 200, headers: [] });
    expect([...store.slots.values()].sort((a, b) => a - b)).to.deep.equal([now, now + 150, now + 300]);
  });

  it('runs every wait inside the caller’s park, and refuses past the caller’s longest wait', async () => {
    const store = new MemoryGateStore();
    const gate = gateOf(store, Date.now());
    const url = 'http://slow.example/a';
    await gate.crawlDelay(url, 300, 60_000);
    (await gate.enter(url, { account: 'a' })).done();
    let parked = 0;
    const park: Park = async (wait) => {
      parked++;
      return wait();
    };
    (await gate.enter(url, { account: 'a', park })).done();
    expect(parked).to.equal(1);
    const refusal = await gate.enter(url, { account: 'a', maxWaitMs: 50 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHostWait(refusal), String(refusal)).to.equal(true);
    expect(refusal).to.include({ reason: 'busy', host: 'slow.example' });
  });

  it('holds a quiet host to its concurrency once its turns are known, refuses a caller past its longest wait, and lets a caller that left give up its place', async () => {
    const store = new MemoryGateStore();
    const gate = gateOf(store, Date.now());
    const url = 'http://quiet.example/page';
    // Rounds after the first take their turns from memory (policy read, turns known): still at most 4 at once.
    for (let round = 0; round < 3; round++) {
      const tickets = await Promise.all(Array.from({ length: 4 }, () => gate.enter(url, { account: 'a' })));
      const refusal = await gate.enter(url, { account: 'b', maxWaitMs: 30 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isHostWait(refusal), String(refusal)).to.equal(true);
      expect(refusal).to.include({ reason: 'busy', host: 'quiet.example' });
      const leaving = new AbortController();
      const left = gate.enter(url, { account: 'c', signal: leaving.signal, maxWaitMs: 5_000 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      const waiting = gate.enter(url, { account: 'd', maxWaitMs: 5_000 });
      leaving.abort();
      const gone = await left;
      expect(gone).to.be.instanceOf(Error);
      expect(isHostWait(gone)).to.equal(false);
      tickets[0]!.done({ status: 200, headers: [] });
      // The turn given back goes to the caller still waiting, not to the one that left.
      const next = await waiting;
      for (const ticket of [...tickets.slice(1), next]) ticket.done({ status: 200, headers: [] });
    }
  });

  it('pauses the host that answered 429, not the one the request entered by, and tells a caller that waits less how long', async () => {
    const store = new MemoryGateStore();
    const now = Date.now();
    const gate = gateOf(store, now);
    const ticket = await gate.enter('http://first.example/hop', { account: 'a' });
    ticket.done({ status: 429, headers: [['retry-after', '30']], url: 'http://second.example/limited' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([...store.backoffs.keys()]).to.deep.equal(['second.example']);
    (await gate.enter('http://first.example/page', { account: 'a', maxWaitMs: 1_000 })).done();
    const refusal = await gate.enter('http://second.example/page', { account: 'a', maxWaitMs: 1_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isHostWait(refusal)).to.equal(true);
    expect(refusal).to.include({ reason: 'paused', host: 'second.example' });
    expect((refusal as { until: number }).until).to.equal(now + 30_000);
  });

  it('gives a busy host’s turns to accounts in rotation across processes: an account flooding every process gets no more than one request in one', async () => {
    const store = new MemoryGateStore();
    // Three processes' gates on one store; the host takes one request at a time, at most 500 a second (governed).
    const gates = Array.from({ length: 3 }, () => new HostGate(store, { defaults: { rate: 0, concurrency: 4 }, named: [{ name: 'busy.example', rate: 500, concurrency: 1 }], backoffMaxMs: 60_000 }));
    const url = 'http://busy.example/page';
    const order: string[] = [];
    const TURNS = 40;
    const requester = async (gate: HostGate, account: string): Promise<void> => {
      while (order.length < TURNS) {
        const ticket = await gate.enter(url, { account });
        order.push(account);
        await new Promise((resolve) => setTimeout(resolve, 15));
        ticket.done({ status: 200, headers: [] });
      }
    };
    // The flooder: four requests at once in every process; the other account: one at a time, in the third only.
    const flood = gates.flatMap((gate) => Array.from({ length: 4 }, () => requester(gate, 'flooder')));
    await Promise.all([...flood, requester(gates[2]!, 'tenant')]);
    const tenant = order.slice(0, TURNS).filter((account) => account === 'tenant').length;
    // In rotation the tenant gets every other turn; with turns per process, about one in four.
    expect(tenant, order.join(' ')).to.be.at.least(0.4 * TURNS);
  });
});
