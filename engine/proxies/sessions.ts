/**
 * Session pins: `session_id` keeps the same proxy (so the same exit IP) for a fixed time from the first
 * request. Bounded: past `maxEntries`, expired pins go first, then the oldest; a forgotten pin only
 * means the next request of that session may leave through another proxy.
 */
export const SESSION_TTL_MS = 10 * 60 * 1000;

interface Pin {
  proxyId: string;
  expiresAt: number;
}

export interface SessionPins {
  get(key: string): string | undefined;
  set(key: string, proxyId: string): void;
  /** Drops the pin of `key` if it points at `proxyId` (that proxy failed). */
  release(key: string, proxyId: string): void;
  readonly size: number;
}

export function createSessionPins(options: { now: () => number; ttlMs?: number; maxEntries?: number }): SessionPins {
  const ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  const maxEntries = options.maxEntries ?? 10_000;
  const pins = new Map<string, Pin>();

  const evict = (): void => {
    const now = options.now();
    for (const [key, pin] of pins) if (pin.expiresAt <= now) pins.delete(key);
    // Map order is insertion order: the first keys are the oldest pins.
    for (const key of pins.keys()) {
      if (pins.size < maxEntries) break;
      pins.delete(key);
    }
  };

  return {
    get(key) {
      const pin = pins.get(key);
      if (!pin) return undefined;
      if (pin.expiresAt > options.now()) return pin.proxyId;
      pins.delete(key);
      return undefined;
    },
    set(key, proxyId) {
      pins.delete(key);
      if (pins.size >= maxEntries) evict();
      pins.set(key, { proxyId, expiresAt: options.now() + ttlMs });
    },
    release(key, proxyId) {
      if (pins.get(key)?.proxyId === proxyId) pins.delete(key);
    },
    get size() {
      return pins.size;
    },
  };
}
