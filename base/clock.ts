/**
 * The time source of accounts, periods, holds and leases. Production uses the system clock; tests use
 * a `ManualClock` they move forward, so period rollovers and lease expiry are tested without sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private current: number = Date.now()) {}

  now(): number {
    return this.current;
  }

  set(at: number | Date | string): void {
    this.current = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
