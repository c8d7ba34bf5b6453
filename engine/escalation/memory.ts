/**
 * Which configuration last worked, per registrable domain (`shop.example.co.uk` for
 * `www.shop.example.co.uk`), remembered for a while so the next request to the domain starts there.
 * The store is an interface: the domain's on the database in the services (core/fetch/rung-store.ts), a
 * Map in tests. Expiry is checked on read (FerretDB has no TTL indexes); `purgeExpired` is for a
 * periodic cleanup.
 */
import { domainKeyOf } from '../safety/domain';
import type { RungId } from './rungs';

export interface DomainRungRecord {
  domain: string;
  rung: RungId;
  updatedAt: Date;
  expiresAt: Date;
}

export interface DomainRungStore {
  get(domain: string): Promise<DomainRungRecord | undefined>;
  put(record: DomainRungRecord): Promise<void>;
  delete(domain: string): Promise<void>;
  /** Removes records that expired before `now`; returns how many. */
  purgeExpired(now: Date): Promise<number>;
}

export interface Recollection {
  rung: RungId;
  /** Past half its lifetime: worth writing again on the next success, to keep it. */
  stale: boolean;
}

export interface RungMemory {
  recall(url: string): Promise<Recollection | undefined>;
  remember(url: string, rung: RungId): Promise<void>;
}

/** The domain a rung is remembered for: the registrable domain of a URL's host, the host itself for IP addresses and unknown suffixes. */
export function rungDomainOf(url: string): string {
  return domainKeyOf(new URL(url).hostname);
}

export function createRungMemory(store: DomainRungStore, options: { ttlMs: number; now?: () => number }): RungMemory {
  const now = options.now ?? Date.now;
  return {
    async recall(url) {
      const domain = rungDomainOf(url);
      const record = await store.get(domain);
      if (!record) return undefined;
      const at = now();
      if (record.expiresAt.getTime() <= at) {
        await store.delete(domain);
        return undefined;
      }
      return { rung: record.rung, stale: record.updatedAt.getTime() + options.ttlMs / 2 <= at };
    },
    async remember(url, rung) {
      const at = now();
      await store.put({ domain: rungDomainOf(url), rung, updatedAt: new Date(at), expiresAt: new Date(at + options.ttlMs) });
    },
  };
}

export class InMemoryDomainRungStore implements DomainRungStore {
  readonly records = new Map<string, DomainRungRecord>();

  get(domain: string): Promise<DomainRungRecord | undefined> {
    return Promise.resolve(this.records.get(domain));
  }

  put(record: DomainRungRecord): Promise<void> {
    this.records.set(record.domain, { ...record });
    return Promise.resolve();
  }

  delete(domain: string): Promise<void> {
    this.records.delete(domain);
    return Promise.resolve();
  }

  purgeExpired(now: Date): Promise<number> {
    let removed = 0;
    for (const [domain, record] of this.records) {
      if (record.expiresAt <= now) {
        this.records.delete(domain);
        removed++;
      }
    }
    return Promise.resolve(removed);
  }
}
