/**
 * Which budgets a request to a URL draws on: its exact host's (host and port; the installation's
 * default unless `HOST_BUDGETS` names it) and, when `HOST_BUDGETS` names its registrable domain, the
 * budget all hosts of that domain share.
 */
import { registrableDomain } from '../safety/domain';

export interface Budget {
  /** Request starts per second; 0: none beyond the host's Crawl-delay and back-offs. */
  rate: number;
  /** Requests at once. */
  concurrency: number;
}

export interface BudgetRules {
  defaults: Budget;
  named: ReadonlyArray<{ name: string; rate: number; concurrency?: number }>;
}

export interface GateKey {
  key: string;
  budget: Budget;
  /** The exact host: its back-offs and Crawl-delay apply here. */
  host: boolean;
}

/** Hosts whose keys are remembered at most; past it, they are worked out afresh. */
const MAX_KNOWN_HOSTS = 10_000;

export class GateKeys {
  private readonly hosts = new Map<string, Budget>();
  private readonly domains = new Map<string, Budget>();
  private readonly known = new Map<string, readonly GateKey[]>();

  constructor(private readonly rules: BudgetRules) {
    for (const entry of rules.named) {
      const budget = { rate: entry.rate, concurrency: entry.concurrency ?? rules.defaults.concurrency };
      const bare = entry.name.replace(/:\d+$/, '');
      if (bare === entry.name && registrableDomain(bare) === bare) this.domains.set(bare, budget);
      else this.hosts.set(entry.name, budget);
    }
  }

  of(url: URL): readonly GateKey[] {
    // The keys depend on the host alone and the rules never change: worked out once per host.
    const cached = this.known.get(url.host);
    if (cached) return cached;
    const hostname = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const host = url.host.toLowerCase();
    const keys: GateKey[] = [{ key: host, budget: this.hosts.get(host) ?? this.hosts.get(hostname) ?? this.rules.defaults, host: true }];
    const domain = registrableDomain(hostname);
    const shared = domain ? this.domains.get(domain) : undefined;
    if (domain && shared) keys.push({ key: `*.${domain}`, budget: shared, host: false });
    if (this.known.size >= MAX_KNOWN_HOSTS) this.known.clear();
    this.known.set(url.host, keys);
    return keys;
  }
}
