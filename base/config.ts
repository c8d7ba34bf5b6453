/**
 * The one place that reads the environment. Every variable is declared once below with its parser,
 * default and description; `loadConfig` turns an environment into a typed, frozen object or throws a
 * `ConfigError` naming the first bad variable. The README table and the docker-compose test both read
 * `CONFIG_VARIABLES`, so a variable added here is documented and checked everywhere.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseBoolean } from './boolean';

/** The folder of package.json: this file's parent from the sources, two levels up from the build (dist/core). */
export const PROJECT_ROOT = [path.resolve(__dirname, '..'), path.resolve(__dirname, '..', '..')].find((folder) => existsSync(path.join(folder, 'package.json'))) ?? path.resolve(__dirname, '..');

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string) => T;

interface Variable<T> {
  parse: Parser<T>;
  /** Raw default, parsed like a real value; `undefined` means "not set" is a valid state. */
  fallback?: string;
  description: string;
  /** Where the variable matters: every process, the API, the worker, or only the local launcher. */
  scope: 'all' | 'api' | 'worker' | 'launcher';
}

const fail = (message: string): never => {
  throw new Error(message);
};

const integer =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) return fail(`expected an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) return fail(`expected ${min}..${max}, got ${value}`);
    return value;
  };

const port: Parser<number> = integer(0, 65535);

const decimal =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^\d+(\.\d+)?$/.test(raw.trim())) return fail(`expected a number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) return fail(`expected ${min}..${max}, got ${value}`);
    return value;
  };

/** `name=rate[/concurrency]` entries: a host's or a registrable domain's own politeness budget. */
const hostBudgets: Parser<Array<{ name: string; rate: number; concurrency?: number }>> = (raw) =>
  list(raw).map((item) => {
    const match = /^([a-z0-9.-]+(?::\d{1,5})?)=(\d+(?:\.\d+)?)(?:\/(\d{1,3}))?$/i.exec(item);
    if (!match) return fail(`expected name=rate[/concurrency], got "${item}"`);
    const concurrency = match[3] !== undefined ? Number(match[3]) : undefined;
    if (concurrency !== undefined && (concurrency < 1 || concurrency > 256)) return fail(`concurrency must be 1..256, got "${item}"`);
    return { name: match[1]!.toLowerCase(), rate: Number(match[2]), ...(concurrency !== undefined ? { concurrency } : {}) };
  });

const text: Parser<string> = (raw) => raw.trim();

const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw) => {
    const value = raw.trim().toLowerCase() as T;
    return values.includes(value) ? value : fail(`expected one of ${values.join(', ')}, got "${raw}"`);
  };

const boolean: Parser<boolean> = (raw) => parseBoolean(raw, 'environment') ?? fail(`expected true or false, got "${raw}"`);

const list: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);

const httpUrl: Parser<string> = (raw) => {
  const value = raw.trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(`expected an http(s) URL, got "${raw}"`);
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? value : fail(`expected an http(s) URL, got "${raw}"`);
};

const mongoUrl: Parser<string> = (raw) =>
  /^mongodb(\+srv)?:\/\/\S+$/.test(raw.trim()) ? raw.trim() : fail(`expected a mongodb:// URL, got "${raw}"`);

const hostPort: Parser<string> = (raw) =>
  /^[\w.-]+:\d{1,5}$|^\[[\da-f:]+\]:\d{1,5}$/i.test(raw.trim()) ? raw.trim() : fail(`expected host:port, got "${raw}"`);

const byteSize: Parser<number> = (raw) => {
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!match) return fail(`expected a size such as 512kb or 25mb, got "${raw}"`);
  const units: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
  return Number(match[1]) * (units[(match[2] ?? 'b').toLowerCase()] ?? 1);
};

/** 32 bytes, base64: the server key that seals secrets at rest. */
const serverKey: Parser<string> = (raw) =>
  Buffer.from(raw.trim(), 'base64').length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(raw.trim())
    ? raw.trim()
    : fail('expected 32 random bytes, base64-encoded (for example `openssl rand -base64 32`)');

const directory: Parser<string> = (raw) => path.resolve(PROJECT_ROOT, raw.trim());

/** `name=address` pairs; a leading `*.` matches every subdomain. */
const hostOverrides: Parser<Array<{ pattern: string; address: string }>> = (raw) =>
  list(raw).map((pair) => {
    const [pattern, address, extra] = pair.split('=').map((part) => part.trim().toLowerCase());
    if (!pattern || !address || extra !== undefined) return fail(`expected name=address pairs, got "${pair}"`);
    return { pattern, address };
  });

/** A proxy of a pool: `[cc=]scheme://[user:pass@]host:port`, `cc` an optional two-letter country. */
export interface ProxyEntry {
  url: string;
  country?: string;
}

const proxyList: Parser<ProxyEntry[]> = (raw) =>
  list(raw).map((item) => {
    const match = /^(?:([a-z]{2})=)?((?:https?|socks5?):\/\/.+)$/i.exec(item);
    if (!match?.[2]) return fail(`expected [cc=]http|https|socks5://[user:pass@]host:port, got "${item}"`);
    let url: URL;
    try {
      url = new URL(match[2]);
    } catch {
      return fail(`not a valid proxy URL: "${item}"`);
    }
    if (!url.hostname) return fail(`a proxy URL needs a host, got "${item}"`);
    return { url: url.href.replace(/\/$/, ''), ...(match[1] ? { country: match[1].toLowerCase() } : {}) };
  });

/** `name:credits:concurrency[:price[:active_jobs[:preparation_slots]]]` items, comma-separated. */
const planList: Parser<Array<{ name: string; credits: number; concurrency: number; price?: number; activeJobs?: number; preparationSlots?: number }>> = (raw) =>
  list(raw).map((item) => {
    const [name, ...numbers] = item.split(':').map((part) => part.trim());
    if (!name || !/^[a-z][\w-]{0,39}$/.test(name) || numbers.length < 2 || numbers.length > 5 || numbers.some((n) => !/^\d{1,12}$/.test(n))) {
      return fail(`expected name:credits:concurrency[:price[:active_jobs[:preparation_slots]]], got "${item}"`);
    }
    const [credits, concurrency, price, activeJobs, preparationSlots] = numbers.map(Number) as [number, number, ...Array<number | undefined>];
    if (concurrency < 1) return fail(`plan ${name}: concurrency must be at least 1`);
    return { name, credits, concurrency, price, activeJobs, preparationSlots };
  });

/** What an account may hold at once; `PLAN_LIMITS` overrides them per plan. */
export interface AccountLimits {
  /** Open MCP sessions. */
  mcpSessions: number;
  /** Scheduled Batch jobs. */
  scheduledJobs: number;
  /** Shortest `rate` of a scheduled job, in seconds (unset: BATCH_SCHEDULE_MIN_INTERVAL_SECONDS). */
  scheduleIntervalSeconds?: number;
  /** Stored CSV inputs (not yet expired). */
  storedInputs: number;
  /** Total bytes of the stored CSV inputs. */
  storedInputBytes: number;
  /** Exports being written at once. */
  concurrentExports: number;
  /** Authenticated requests per second, across the API processes (the request budget's refill). */
  requestsPerSecond: number;
  /** Authenticated requests an idle account may send at once before the rate applies. */
  requestBurst: number;
  /** Authenticated requests of the account in flight at once, across the API processes. */
  requestsInFlight: number;
  /** Browser pages the account's renders hold at once on a machine; unset: half of `BROWSER_MAX_PAGES` (never more than it). */
  renderPages?: number;
  /** The account's renders that may run to the render deadline per `DEADLINE_RENDER_WINDOW_MS`; past it, its renders are refused (429). */
  deadlineRenders: number;
  /** The account's pages refused at a parse cap per `CAPPED_PAGE_WINDOW_MS`; past it, its Fetches whose outputs parse the page are refused (429). */
  cappedPages: number;
  /** Change tracking: versions kept per tracked URL (the newest). */
  historyVersions: number;
  /** Change tracking: days a version is kept after a newer one replaced it, and a URL no fetch tracked is kept. */
  historyDays: number;
  /** Monitors the account holds (not deleted). */
  monitors: number;
  /** URLs of all the account's monitors together (a crawl-based monitor counts its page limit). */
  monitorUrls: number;
  /** Shortest interval between a monitor's checks, in seconds (unset: MONITOR_MIN_INTERVAL_SECONDS). */
  monitorIntervalSeconds?: number;
}

/**
 * The request budget's members, filled in when ACCOUNT_LIMITS leaves them out: derived from what the
 * stack serves (bench/request-budget.ts, README "Request budget"): a quarter of the job listings one API
 * process and FerretDB serve a second, two seconds of it at once, and what is in flight at that rate.
 * And the allowances of deadline renders and of pages refused at a parse cap.
 */
const REQUEST_BUDGET_DEFAULTS: Pick<AccountLimits, 'requestsPerSecond' | 'requestBurst' | 'requestsInFlight' | 'deadlineRenders' | 'cappedPages'> = {
  requestsPerSecond: 20,
  requestBurst: 40,
  requestsInFlight: 8,
  deadlineRenders: 5,
  cappedPages: 20,
};

/** Limits that may stay unset (a default of their own applies). */
const OPTIONAL_LIMITS: ReadonlySet<keyof AccountLimits> = new Set(['scheduleIntervalSeconds', 'renderPages', 'monitorIntervalSeconds']);

/** Change tracking's history limits, filled in when ACCOUNT_LIMITS leaves them out. */
const HISTORY_DEFAULTS: Pick<AccountLimits, 'historyVersions' | 'historyDays'> = { historyVersions: 10, historyDays: 30 };

/** Monitors' caps, filled in when ACCOUNT_LIMITS leaves them out. */
const MONITOR_DEFAULTS: Pick<AccountLimits, 'monitors' | 'monitorUrls'> = { monitors: 5, monitorUrls: 100 };

const LIMIT_NAMES: Record<string, keyof AccountLimits> = {
  mcp_sessions: 'mcpSessions',
  scheduled_jobs: 'scheduledJobs',
  schedule_interval_seconds: 'scheduleIntervalSeconds',
  stored_inputs: 'storedInputs',
  stored_input_bytes: 'storedInputBytes',
  concurrent_exports: 'concurrentExports',
  requests_per_second: 'requestsPerSecond',
  request_burst: 'requestBurst',
  requests_in_flight: 'requestsInFlight',
  render_pages: 'renderPages',
  deadline_renders: 'deadlineRenders',
  capped_pages: 'cappedPages',
  history_versions: 'historyVersions',
  history_days: 'historyDays',
  monitors: 'monitors',
  monitor_urls: 'monitorUrls',
  monitor_interval_seconds: 'monitorIntervalSeconds',
};

/** `name=value` pairs (sizes as `byteSize`), each a limit of `AccountLimits`. */
function limitPairs(raw: string, separator: string): Partial<AccountLimits> {
  const limits: Partial<AccountLimits> = {};
  for (const pair of raw.split(separator).map((part) => part.trim()).filter(Boolean)) {
    const [name, value, extra] = pair.split('=').map((part) => part.trim());
    const member = LIMIT_NAMES[name ?? ''];
    if (!member || value === undefined || extra !== undefined) return fail(`expected name=value with a name among ${Object.keys(LIMIT_NAMES).join(', ')}, got "${pair}"`);
    limits[member] = member === 'storedInputBytes' ? byteSize(value) : integer(0, 1_000_000_000)(value);
  }
  return limits;
}

const accountLimits: Parser<AccountLimits> = (raw) => {
  const limits = { ...REQUEST_BUDGET_DEFAULTS, ...HISTORY_DEFAULTS, ...MONITOR_DEFAULTS, ...limitPairs(raw, ',') };
  const missing = Object.entries(LIMIT_NAMES).find(([, member]) => !OPTIONAL_LIMITS.has(member) && limits[member] === undefined);
  return missing ? fail(`${missing[0]} is missing`) : (limits as AccountLimits);
};

/** `plan:name=value:name=value` items, comma-separated. */
const planLimits: Parser<Record<string, Partial<AccountLimits>>> = (raw) =>
  Object.fromEntries(
    list(raw).map((item) => {
      const [plan, ...pairs] = item.split(':').map((part) => part.trim());
      if (!plan || !/^[a-z][\w-]{0,39}$/.test(plan) || pairs.length === 0) return fail(`expected plan:name=value[:name=value...], got "${item}"`);
      return [plan, limitPairs(pairs.join(':'), ':')];
    }),
  );

/** Plan names (`*`: every plan, including plans added later). */
const planNames: Parser<string[]> = (raw) => {
  const names = list(raw);
  if (names.includes('*')) return names.length === 1 ? ['*'] : fail('`*` stands alone (every plan), not in a list of names');
  for (const name of names) if (!/^[a-z][\w-]{0,39}$/.test(name)) fail(`not a plan name: "${name}"`);
  return names;
};

const variables = {
  PORT: { parse: port, fallback: '8080', scope: 'api', description: 'Port of the HTTP API; `0`: one the kernel picks, reported to the launcher (set `PUBLIC_URL` with `API_PROCESSES` > 1).' },
  API_PROCESSES: {
    parse: integer(1, 64),
    fallback: '1',
    scope: 'api',
    description:
      'API processes sharing PORT (Node cluster); each has its own connections, slot claims and credit allowance (the browser is shared, `BROWSER_SHARE`). One per core the API may use.',
  },
  HOST: {
    parse: text,
    fallback: '127.0.0.1',
    scope: 'api',
    description: 'Address the API listens on; `0.0.0.0` in containers.',
  },
  APP_PORT: {
    parse: port,
    scope: 'api',
    description: 'When set, the account surfaces (agent signup, claim page) get their own listener on this port.',
  },
  FREE_PLAN_CREDITS: {
    parse: integer(0, 1_000_000_000),
    fallback: '5000',
    scope: 'all',
    description: 'Credits per UTC calendar month on the free plan (agent signups start on it).',
  },
  FREE_PLAN_CONCURRENCY: {
    parse: integer(1, 10_000),
    fallback: '5',
    scope: 'all',
    description: 'Concurrency slots (simultaneous Fetch requests) of the free plan.',
  },
  PLANS: {
    parse: planList,
    fallback: 'developer:250000:20:69,business:3000000:100:299',
    scope: 'all',
    description: 'Paid plans an operator can assign: `name:credits:concurrency[:price[:active_jobs[:preparation_slots]]]`, comma-separated.',
  },
  ACTIVE_JOBS_LIMIT: {
    parse: integer(1, 10_000),
    fallback: '3',
    scope: 'all',
    description: 'Active Crawl and Batch jobs per account, shared by both surfaces (plans may override).',
  },
  ACCOUNT_LIMITS: {
    parse: accountLimits,
    fallback: 'mcp_sessions=20,scheduled_jobs=5,stored_inputs=20,stored_input_bytes=200mb,concurrent_exports=3,requests_per_second=20,request_burst=40,requests_in_flight=8,deadline_renders=5,capped_pages=20',
    scope: 'all',
    description:
      'What every account may hold at once (plans may override with PLAN_LIMITS): open MCP sessions, scheduled Batch jobs, the shortest schedule `rate` in seconds (`schedule_interval_seconds`, default BATCH_SCHEDULE_MIN_INTERVAL_SECONDS), stored CSV inputs and their total bytes, exports being written. One more is refused with 429 `quota_exceeded` naming the limit. And the request budget, the account\'s across every API process (each live process takes budget ÷ live processes) and checked in memory before any database work: authenticated requests per second (`requests_per_second`, refilling up to `request_burst`) and in flight at once (`requests_in_flight`), beyond which 429 `rate_limited` with `Retry-After`; left out, they are the defaults measured on the stack (README "Request budget"). And the browser: pages the account\'s renders hold at once on the machine (`render_pages`, left out: half of BROWSER_MAX_PAGES, at least 1, never more than it; its further renders wait, and waiting accounts are served in turn), and renders that may run to the render deadline per DEADLINE_RENDER_WINDOW_MS (`deadline_renders`, left out: 5), past which its renders are refused with 429 `rate_limited` naming `deadline_renders`, with `Retry-After`. And pages refused at a parse cap (RESP005, never charged) per CAPPED_PAGE_WINDOW_MS (`capped_pages`, left out: 20), past which the account\'s Fetches whose outputs parse the page are refused with 429 `rate_limited` naming `capped_pages`, with `Retry-After`. And change tracking\'s history: versions kept per tracked URL (`history_versions`, left out: 10) and days a replaced version, or a URL no fetch tracks any more, is kept (`history_days`, left out: 30). And monitors: how many (`monitors`, left out: 5), their URLs together (`monitor_urls`, left out: 100) and the shortest interval between checks in seconds (`monitor_interval_seconds`, left out: MONITOR_MIN_INTERVAL_SECONDS).',
  },
  PLAN_LIMITS: {
    parse: planLimits,
    fallback:
      'developer:mcp_sessions=100:scheduled_jobs=50:stored_inputs=100:stored_input_bytes=1gb:concurrent_exports=10:requests_per_second=80:request_burst=160:requests_in_flight=40:deadline_renders=20:capped_pages=100:history_versions=100:history_days=90:monitors=50:monitor_urls=5000:monitor_interval_seconds=300,business:mcp_sessions=500:scheduled_jobs=500:stored_inputs=500:stored_input_bytes=5gb:concurrent_exports=20:requests_per_second=200:request_burst=400:requests_in_flight=200:deadline_renders=100:capped_pages=500:history_versions=1000:history_days=365:monitors=500:monitor_urls=50000:monitor_interval_seconds=60',
    scope: 'all',
    description:
      'Per-plan overrides of ACCOUNT_LIMITS: `plan:name=value[:name=value...]`, comma-separated (`developer:mcp_sessions=100:scheduled_jobs=50`). The paid plans raise the request budget: their Fetch concurrency needs more requests at once than the free plan\'s.',
  },
  CSV_INPUT_MAX_BYTES: {
    parse: byteSize,
    fallback: '50mb',
    scope: 'api',
    description: 'Batch: largest CSV input an upload may send; a larger one is refused with 413 naming the cap while it arrives.',
  },
  OAUTH_CLIENTS_PER_ADDRESS: {
    parse: integer(1, 100_000),
    fallback: '20',
    scope: 'api',
    description: 'OAuth clients one client network (IPv4 /24, IPv6 /64) may register per `OAUTH_CLIENT_WINDOW_MS` (429 `quota_exceeded` beyond).',
  },
  OAUTH_CLIENT_WINDOW_MS: {
    parse: integer(1_000, 2_592_000_000),
    fallback: '86400000',
    scope: 'api',
    description: 'The window over which OAUTH_CLIENTS_PER_ADDRESS counts registrations.',
  },
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: {
    parse: integer(60, 31_536_000),
    fallback: '3600',
    scope: 'api',
    description: 'Lifetime of an OAuth access token (an API key made for the client); the client gets a new one with its refresh token, which works once.',
  },
  LIMIT_REFUSAL_MEMORY_MS: {
    parse: integer(0, 60_000),
    fallback: '1500',
    scope: 'all',
    description: 'How long an API process answers an account\'s further creations of a resource it was refused (`quota_exceeded`) from memory, without counting in the database again; a place the account frees through the same process ends it at once (0: never remembered).',
  },
  ROUTE_RATE_LIMIT: {
    parse: integer(1, 100_000),
    fallback: '30',
    scope: 'api',
    description: 'Requests per `ROUTE_RATE_WINDOW_MS` to `/oauth/register`, `/v1/webhook/test` and agent signup, counted per client network and, where a key is sent, per account (429 with `Retry-After` beyond).',
  },
  ROUTE_RATE_WINDOW_MS: {
    parse: integer(1_000, 86_400_000),
    fallback: '60000',
    scope: 'api',
    description: 'The window of ROUTE_RATE_LIMIT.',
  },
  PREPARATION_SLOTS: {
    parse: integer(0, 100_000),
    fallback: '10',
    scope: 'all',
    description: 'Extract domain preparations per account and UTC month (plans may override).',
  },
  EXTRACT_PLANS: {
    parse: planNames,
    fallback: '*',
    scope: 'all',
    description:
      'Plans that include Extract (`extract` on Fetch), comma-separated names among `free` and PLANS, or `*` for every plan. Fetch with `extract` on another plan answers 402 AUTH010, on which clients fall back to `autoparse`.',
  },
  EXTRACT_SAMPLE_SEED: {
    parse: text,
    scope: 'worker',
    description:
      'A seed mixed into every choice of pages an Extract preparation makes (the discovery crawl, each kind\'s sample and its split): unset, the domain, kind and attempt alone decide. The same seed draws the same pages; benchmarks set others to measure how much an outcome depends on the sample.',
  },
  KEY_CACHE_TTL_MS: {
    parse: integer(0, 600_000),
    fallback: '5000',
    scope: 'api',
    description: 'How long an API process trusts a cached key look-up; a key revoked elsewhere works at most this long here.',
  },
  AUTH_FAILURE_BURST: {
    parse: integer(1, 1_000_000),
    fallback: '50',
    scope: 'api',
    description: 'Database look-ups of API keys that no cache knows and that turn out not valid, allowed at once per client network (IPv4 /24, IPv6 /64), shared by the live API processes (each takes its part); beyond, such keys are refused with 429 `rate_limited` (`limit` `auth_failures`, `Retry-After`) before any database work. A key found valid gives its look-up back, and cached keys (valid or not) never count, so only failures wear the allowance down; a valid key no cache holds yet is refused too while its network is over the limit.',
  },
  ACCOUNT_DATABASE_SHARE_PERCENT: {
    parse: integer(1, 100),
    fallback: '25',
    scope: 'api',
    description:
      'Share of an API process\'s database connections (the driver\'s pool, `maxPoolSize` of MONGODB_URL, 100 by default) that one account\'s requests of the database-backed surfaces (Batch, Crawl, usage, prepared domains) may use at once; as many more wait in the account\'s own line, and beyond, 429 `rate_limited` (`limit` `database_share`). Other accounts never wait behind them.',
  },
  AUTH_FAILURES_PER_MINUTE: {
    parse: integer(0, 1_000_000),
    fallback: '60',
    scope: 'api',
    description: 'How fast a client network earns back failed key look-ups (AUTH_FAILURE_BURST) per minute.',
  },
  AUTH_FAILURE_HOLD_MS: {
    parse: integer(0, 5_000),
    fallback: '1000',
    scope: 'api',
    description:
      'How long a refusal of a client network over its failed key look-ups (AUTH_FAILURE_BURST) is held before its 429 is sent, so a client guessing keys sends at most one request per connection this often instead of thousands a second; each API process holds at most AUTH_FAILURE_HOLDS_PER_NETWORK per network and 1,000 in all, and answers the rest at once. Every such refusal closes its connection. 0 answers at once.',
  },
  AUTH_FAILURE_HOLDS_PER_NETWORK: {
    parse: integer(1, 1_000),
    fallback: '16',
    scope: 'api',
    description: 'Refusals of one client network held at once (AUTH_FAILURE_HOLD_MS); beyond, they are answered at once and their connections closed.',
  },
  SLOT_LEASE_MS: {
    parse: integer(1_000, 3_600_000),
    fallback: '30000',
    scope: 'all',
    description: 'Lifetime of an API process claim on concurrency slots; the holder renews it every third of this, so a dead process frees its slots after it.',
  },
  SLOT_CLAIM_IDLE_MS: {
    parse: integer(50, 60_000),
    fallback: '1000',
    scope: 'api',
    description: 'Concurrency slots an API process holds but leaves unused this long are given back; other API processes get them within about twice this.',
  },
  CREDIT_HOLD_MS: {
    parse: integer(10_000, 86_400_000),
    fallback: '900000',
    scope: 'all',
    description: 'How long reserved credits stay held when their holder never settles nor releases them (a crashed process).',
  },
  CREDIT_ALLOWANCE: {
    parse: integer(0, 1_000_000),
    fallback: '1000',
    scope: 'api',
    description:
      'Most credits an API process sets aside at once, beyond what its requests need, to take Fetch reservations in memory; 0 writes every reservation to the database.',
  },
  CREDIT_FLUSH_MS: {
    parse: integer(50, 60_000),
    fallback: '500',
    scope: 'api',
    description: 'How often an API process renews the credit allowances its Fetch requests draw on and closes idle ones (each Fetch\'s charge is written to the ledger before the Fetch is answered).',
  },
  LEDGER_RETENTION_HOURS: {
    parse: integer(0, 87_600),
    fallback: '24',
    scope: 'all',
    description:
      'How long entries of the usage-ledger and slot-claim chains are kept before they are pruned; the newest 1,000 entries of each chain (and so every month’s final usage) always stay. 0 keeps every entry.',
  },
  AGENT_SIGNUP: {
    parse: boolean,
    fallback: 'true',
    scope: 'api',
    description: 'Serve `POST /api/agent/signup` (accounts created without a human).',
  },
  SIGNUP_RATE_LIMIT: {
    parse: integer(0, 100_000),
    fallback: '10',
    scope: 'api',
    description: 'Agent signups allowed per client network (IPv4 /24, IPv6 /64) per window.',
  },
  SIGNUP_RATE_WINDOW_MS: {
    parse: integer(1_000, 2_592_000_000),
    fallback: '3600000',
    scope: 'api',
    description: 'Length of the agent signup rate-limit window.',
  },
  TRUST_PROXY: {
    parse: boolean,
    fallback: 'false',
    scope: 'api',
    description: 'Take the client address from `X-Forwarded-For` (behind a load balancer) for per-network limits.',
  },
  APP_URL: {
    parse: httpUrl,
    scope: 'api',
    description: 'Base URL of the account surfaces used in claim links; defaults to `http://localhost:$APP_PORT` with APP_PORT, else `$PUBLIC_URL`.',
  },
  PUBLIC_URL: {
    parse: httpUrl,
    scope: 'api',
    description: 'Base URL callers use to reach the API; defaults to `http://localhost:$PORT`.',
  },
  FETCHPLANE_API_KEY: {
    parse: text,
    scope: 'api',
    description: 'API key `npm run mcp` (the MCP server over stdio) acts with.',
  },
  DOCS_URL: {
    parse: httpUrl,
    scope: 'api',
    description: 'Base of the `type` link in error documents; defaults to `$PUBLIC_URL/docs` (served by the API).',
  },
  DATA_DIR: {
    parse: directory,
    fallback: 'data',
    scope: 'all',
    description: 'Folder for local data: FerretDB and Temporal files, logs, stored pages.',
  },
  MONGODB_URL: {
    parse: mongoUrl,
    scope: 'all',
    description: 'MongoDB connection string. Unset: the launcher starts FerretDB on SQLite under `DATA_DIR`.',
  },
  MONGODB_DATABASE: { parse: text, fallback: 'fetchplane', scope: 'all', description: 'Database name.' },
  DATABASE_TIMEOUT_MS: {
    parse: integer(200, 120_000),
    fallback: '3000',
    scope: 'all',
    description:
      'Longest wait for the database to be reachable (server selection, connecting): past it, a request that needs the database answers 503 `service_unavailable` with `Retry-After`.',
  },
  TEMPORAL_ADDRESS: {
    parse: hostPort,
    scope: 'all',
    description: 'Temporal frontend `host:port`. Unset: the launcher starts the Temporal dev server.',
  },
  TEMPORAL_NAMESPACE: { parse: text, fallback: 'default', scope: 'all', description: 'Temporal namespace.' },
  TEMPORAL_TASK_QUEUE: {
    parse: text,
    fallback: 'fetchplane',
    scope: 'all',
    description: 'Task queue the worker polls and the API starts workflows on.',
  },
  WORKER_MAX_ACTIVITIES: {
    parse: integer(1, 10_000),
    fallback: '100',
    scope: 'worker',
    description: 'Activities (Batch and crawl slices, preparation steps, deliveries) one worker runs at once (Temporal\'s maxConcurrentActivityTaskExecutions); more wait on the task queue for any worker.',
  },
  WORKER_LIGHT_ACTIVITIES: {
    parse: integer(1, 10_000),
    fallback: '50',
    scope: 'worker',
    description: 'Light activities (webhook deliveries, progress and end records, retention, the reconciler) one worker runs at once, on the task queue `<TEMPORAL_TASK_QUEUE>-light` it serves beside the main one, so they never wait behind slices.',
  },
  WORKER_MAX_WORKFLOW_TASKS: {
    parse: integer(1, 10_000),
    fallback: '40',
    scope: 'worker',
    description: 'Workflow tasks one worker runs at once (Temporal\'s maxConcurrentWorkflowTaskExecutions).',
  },
  TEMPORAL_TIMEOUT_MS: {
    parse: integer(200, 120_000),
    fallback: '5000',
    scope: 'all',
    description:
      'Deadline of one call to Temporal (start, signal, describe…), its retries included: past it, a request that needs Temporal answers 503 `service_unavailable` with `Retry-After`.',
  },
  WORKER_HEARTBEAT_MS: {
    parse: integer(100, 60_000),
    fallback: '1000',
    scope: 'all',
    description:
      'How often a worker records that it is alive; `/readyz` and the endpoints that start work count a worker gone after five of these without a record (Temporal lists a dead worker\'s pollers for minutes).',
  },
  TARGET_ALLOWLIST: {
    parse: list,
    fallback: '',
    scope: 'all',
    description: 'Comma-separated hosts, addresses or CIDRs that may be fetched although private (local development, tests).',
  },
  HOST_OVERRIDES: {
    parse: hostOverrides,
    fallback: '',
    scope: 'all',
    description: 'Comma-separated `name=address` pairs (`*.shop.test=127.0.0.1`) resolving names without DNS.',
  },
  FETCH_CONNECT_TIMEOUT_MS: {
    parse: integer(100, 120_000),
    fallback: '10000',
    scope: 'all',
    description: 'Plain fetches: longest wait for a TCP/TLS connection to the target (or its proxy).',
  },
  FETCH_HEADERS_TIMEOUT_MS: {
    parse: integer(100, 300_000),
    fallback: '30000',
    scope: 'all',
    description: 'Plain fetches: longest wait for the response headers once the request is sent.',
  },
  FETCH_BODY_TIMEOUT_MS: {
    parse: integer(100, 300_000),
    fallback: '30000',
    scope: 'all',
    description: 'Plain fetches: longest silence between two chunks of the response body.',
  },
  FETCH_TOTAL_TIMEOUT_MS: {
    parse: integer(100, 600_000),
    fallback: '60000',
    scope: 'all',
    description: 'Plain fetches: deadline for the whole fetch, redirects and proxy retries included (`CTX0002`).',
  },
  FETCH_MAX_BYTES: {
    parse: byteSize,
    fallback: '10mb',
    scope: 'all',
    description: 'Largest target response accepted, before and after decompression (`RESP005`).',
  },
  HTML_MAX_SIZE: {
    parse: byteSize,
    fallback: '10mb',
    scope: 'all',
    description:
      'HTML outputs (Markdown, plain text, `main_content`, `css_extractor`, `outputs`, `autoparse`, Extract; crawl pages): largest page read, in characters; a larger page gets 413 `RESP005` naming this cap and is not charged.',
  },
  HTML_MAX_NODES: {
    parse: integer(1_000, 10_000_000),
    fallback: '200000',
    scope: 'all',
    description:
      'HTML outputs: nodes (elements and text) parsing one page may make, counted by a linear pre-scan before the parser builds anything (a node moved out of an element the page leaves open counts again); past it 413 `RESP005`, not charged.',
  },
  HTML_MAX_DEPTH: {
    parse: integer(500, 1_000_000),
    fallback: '50000',
    scope: 'all',
    description: 'HTML outputs: elements open at once while parsing a page; past it 413 `RESP005`, not charged. Nesting past 400 levels is flattened to text, as browsers do, not refused.',
  },
  HTML_INLINE_MAX_SIZE: {
    parse: byteSize,
    fallback: '64kb',
    scope: 'all',
    description: 'HTML outputs: pages up to this size are scanned on the request\'s own thread, and converted there when they make at most `HTML_INLINE_MAX_NODES` nodes and nest at most 400 deep; other pages are converted on a worker thread (`WORKER_THREADS`). `0`: always on a worker thread.',
  },
  HTML_INLINE_MAX_NODES: {
    parse: integer(0, 1_000_000),
    fallback: '1000',
    scope: 'all',
    description: 'HTML outputs: nodes of a page converted on the request\'s own thread at most (see `HTML_INLINE_MAX_SIZE`); below it a worker thread\'s fixed cost per page outweighs what it saves the event loop (`bench/html-threads.ts`).',
  },
  HTML_TIMEOUT_MS: {
    parse: integer(100, 600_000),
    fallback: '15000',
    scope: 'all',
    description: 'HTML outputs on a worker thread: time one page may take; past it the thread is stopped (another replaces it) and the request gets 413 `RESP005` naming this budget, not charged.',
  },
  WORKER_THREADS: {
    parse: integer(1, 64),
    fallback: '2',
    scope: 'all',
    description: 'Worker threads of each process (API, worker) for work kept off its event loop (large HTML outputs), started when needed and ended after a minute without work.',
  },
  WORKER_THREAD_MEMORY_MB: {
    parse: integer(32, 65_536),
    fallback: '512',
    scope: 'all',
    description: 'Heap of each worker thread, in MB; a task past it ends its thread (another replaces it) and an HTML output gets 413 `RESP005` naming this budget, not charged.',
  },
  WORKER_THREAD_QUEUE: {
    parse: integer(0, 100_000),
    fallback: '64',
    scope: 'all',
    description: 'Tasks of one process waiting for a worker thread at most; past it a Fetch is answered 503 `service_unavailable` with `Retry-After`, not charged.',
  },
  FETCH_MAX_REDIRECTS: {
    parse: integer(0, 50),
    fallback: '10',
    scope: 'all',
    description: 'Redirects followed per fetch; every hop passes the target check again.',
  },
  DOCUMENT_MAX_BYTES: {
    parse: byteSize,
    fallback: '50mb',
    scope: 'all',
    description:
      'Largest document converted (PDF, DOCX, PPTX, XLSX, ODF, CSV): an upload to `POST /v1/documents` past it is refused while it arrives (413 `document_too_large`); a fetched document is bounded by `FETCH_MAX_BYTES` first.',
  },
  DOCUMENT_MAX_INFLATED_BYTES: {
    parse: byteSize,
    fallback: '100mb',
    scope: 'all',
    description: 'Bytes a document\'s zip parts (DOCX, PPTX, XLSX, ODF) may inflate to, counted while inflating: past it 413 `document_too_large` (zip bombs).',
  },
  DOCUMENT_MAX_PAGES: {
    parse: integer(1, 100_000),
    fallback: '2000',
    scope: 'all',
    description: 'Pages, slides or sheets of one document at most (413 `document_too_large` past it).',
  },
  DOCUMENT_WORKERS: {
    parse: integer(1, 64),
    fallback: '2',
    scope: 'all',
    description: 'Worker threads converting documents in each API and worker process (started when needed); conversions never run on the event loop.',
  },
  DOCUMENT_QUEUE: {
    parse: integer(0, 10_000),
    fallback: '64',
    scope: 'all',
    description: 'Conversions waiting for a document worker per process; past it 503 `documents_busy` with `Retry-After`.',
  },
  DOCUMENT_TIMEOUT_MS: {
    parse: integer(1_000, 600_000),
    fallback: '60000',
    scope: 'all',
    description: 'Wall time of one conversion; past it the worker thread is ended and the answer is 422 `document_too_complex`.',
  },
  DOCUMENT_MEMORY_MB: {
    parse: integer(64, 16_384),
    fallback: '512',
    scope: 'all',
    description: 'Heap of one document worker thread; a conversion that needs more ends its worker and answers 413 `document_too_large`.',
  },
  PROXIES: {
    parse: proxyList,
    fallback: '',
    scope: 'all',
    description:
      'Plain proxy pool, comma-separated `[cc=]scheme://[user:pass@]host:port` (scheme `http`, `https` or `socks5`, ' +
      '`cc` an optional two-letter country, commas in credentials as `%2C`). Empty: plain fetches go direct.',
  },
  PREMIUM_PROXIES: {
    parse: proxyList,
    fallback: '',
    scope: 'all',
    description:
      'Residential pool for `premium_proxy`, same syntax as `PROXIES`: `us=http://u:p@host:8002,de=socks5://u:p@host:1080`. ' +
      '`proxy_country` picks the entries tagged with that country.',
  },
  PROXY_REST_MS: {
    parse: integer(0, 3_600_000),
    fallback: '30000',
    scope: 'all',
    description: 'How long a proxy that failed (refused, timed out, rejected the tunnel) is left out of the rotation.',
  },
  PROXY_ATTEMPTS: {
    parse: integer(1, 10),
    fallback: '3',
    scope: 'all',
    description: 'Proxies tried for one fetch before it fails when proxies keep failing.',
  },
  LOG_LEVEL: {
    parse: oneOf('debug', 'info', 'warn', 'error'),
    fallback: 'info',
    scope: 'all',
    description: 'Lowest level written to the JSON logs.',
  },
  BODY_LIMIT: {
    parse: byteSize,
    fallback: '25mb',
    scope: 'api',
    description: 'Largest request body the API reads (larger bodies get 413).',
  },
  SERVER_HEADERS_TIMEOUT_MS: {
    parse: integer(1_000, 300_000),
    fallback: '20000',
    scope: 'api',
    description: 'Longest time a client may take to send its request headers; slower connections are closed (Node’s own default is 60 s).',
  },
  SERVER_REQUEST_TIMEOUT_MS: {
    parse: integer(1_000, 3_600_000),
    fallback: '60000',
    scope: 'api',
    description: 'Longest time a client may take to send a whole request, body included (Node’s own default is 300 s); it is answered 408.',
  },
  OPERATOR_TOKEN: {
    parse: text,
    scope: 'api',
    description:
      'Bearer token that opens the operational endpoints `/metrics` and `/readyz?deep=true` (`Authorization: Bearer <token>`); unset, both are refused. Plain `/readyz` and `/healthz` stay open.',
  },
  SHUTDOWN_TIMEOUT_MS: {
    parse: integer(0, 600_000),
    fallback: '15000',
    scope: 'all',
    description: 'How long a stopping process waits for in-flight work before it exits.',
  },
  CHROMIUM_PATH: {
    parse: text,
    scope: 'all',
    description:
      'Chromium executable; unset: Debian\'s headless shell `/usr/lib/chromium/chromium-headless-shell`, else the full browser `/usr/lib/chromium/chromium`, else `chromium` on PATH.',
  },
  BROWSER_CPU_WEIGHT: {
    parse: integer(0, 100),
    fallback: '25',
    scope: 'all',
    description:
      'Browser pool: the browsers\' processes run in a CPU control group of their own (`fetchplane-browsers`) weighing this percent of one of the service\'s processes (cgroup v1 `cpu.shares`; on cgroup v2 `cpu.weight` against the service\'s group), so that when the CPU is short the API, the worker and the database are served first and a page whose script never yields cannot take their time. Where the cgroup file system cannot be written (most containers) browsers stay in the service\'s group, as logged once. `0`: no group.',
  },
  BROWSER_MAX_PAGES: {
    parse: integer(1, 64),
    fallback: '4',
    scope: 'all',
    description:
      'Browser pool: pages rendering at once on the machine (in each process with `BROWSER_SHARE=false`); further renders wait for a page. Each account holds at most its plan\'s `render_pages` of them (ACCOUNT_LIMITS).',
  },
  BROWSER_RETIRE_AFTER_PAGES: {
    parse: integer(1, 100_000),
    fallback: '200',
    scope: 'all',
    description: 'Browser pool: a Chromium is replaced by a fresh one after serving this many pages.',
  },
  BROWSER_SHARE: {
    parse: boolean,
    fallback: 'true',
    scope: 'all',
    description: 'One browser per machine: the processes of the service with the same `DATA_DIR` (the API, the worker) render on one Chromium, hosted by the first to render; the page limit, context reuse and idle close then apply to all of them. false: each process has its own.',
  },
  BROWSER_WEBGL: {
    parse: boolean,
    fallback: 'true',
    scope: 'all',
    description: 'Browser renders: WebGL through Chromium\'s software rasterizer. false: no WebGL and no software GPU in the browser\'s GPU process (15–35 MB less memory; WebGL canvases stay blank in screenshots, and pages that require WebGL see none).',
  },
  BROWSER_IDLE_CLOSE_MS: {
    parse: integer(0, 86_400_000),
    fallback: '60000',
    scope: 'all',
    description: 'Browser pool: with no render for this long, the process closes its browsers (no Chromium left running); the next render launches one again. 0 keeps them.',
  },
  RENDER_TIMEOUT_MS: {
    parse: integer(1_000, 600_000),
    fallback: '60000',
    scope: 'all',
    description: 'Deadline of one browser render: slot wait, navigation, waits, instructions and capture (`CTX0002`).',
  },
  DEADLINE_RENDER_WINDOW_MS: {
    parse: integer(1_000, 86_400_000),
    fallback: '600000',
    scope: 'all',
    description:
      'The window in which an account\'s renders that ran to their deadline are counted against its plan\'s `deadline_renders` (ACCOUNT_LIMITS): a render counts when it held its browser page for at least half of `RENDER_TIMEOUT_MS` and ended at the deadline. Counted for the whole service (in the database); a render that waited for a page most of its time does not count.',
  },
  CAPPED_PAGE_WINDOW_MS: {
    parse: integer(1_000, 86_400_000),
    fallback: '600000',
    scope: 'api',
    description:
      'The window in which an account\'s pages refused at a parse cap (RESP005: depth, nodes, size, or an output thread\'s time or memory) are counted against its plan\'s `capped_pages` (ACCOUNT_LIMITS), on the Fetch route and MCP. Such a page costs the API its download and scan and is never charged, so past the allowance the account\'s requests whose outputs parse the page are refused until the window ends; its other requests go on. Counted for the whole service (in the database).',
  },
  RENDER_QUIET_MS: {
    parse: integer(0, 10_000),
    fallback: '20',
    scope: 'all',
    description: 'Browser renders: after load, the page is taken once nothing that can add content is pending (timers due soon, content requests, animation-frame chains changing the DOM) and the DOM has been still this long. 0 takes it at load.',
  },
  RENDER_SETTLE_CAP_MS: {
    parse: integer(0, 30_000),
    fallback: '3000',
    scope: 'all',
    description: 'Browser renders: longest wait after load (past `wait`) for the page to have nothing pending.',
  },
  WAIT_FOR_TIMEOUT_MS: {
    parse: integer(100, 120_000),
    fallback: '10000',
    scope: 'all',
    description: 'Browser renders: longest wait for a `wait_for` selector to appear (`RESP008` naming it); well under `RENDER_TIMEOUT_MS`, and never escalated on.',
  },
  JS_INSTRUCTIONS_BUDGET_MS: {
    parse: integer(100, 300_000),
    fallback: '20000',
    scope: 'all',
    description: 'Time all `js_instructions` of one request may take together; the rest are reported as skipped.',
  },
  XHR_BODY_LIMIT: {
    parse: byteSize,
    fallback: '256kb',
    scope: 'all',
    description: 'Largest body kept per captured XHR/fetch call in `json_response` (longer bodies are cut and flagged).',
  },
  SCREENSHOT_MAX_HEIGHT: {
    parse: integer(100, 32_000),
    fallback: '10000',
    scope: 'all',
    description: 'Full-page and element screenshots are cut to this many CSS pixels of height.',
  },
  AUTO_MODE_MEMORY_MINUTES: {
    parse: integer(1, 525_600),
    fallback: '1440',
    scope: 'all',
    description: '`mode=auto`: how long the configuration that last worked for a domain is remembered.',
  },
  CRAWL_DEFAULT_MAX_ITEMS: {
    parse: integer(1, 100_000),
    fallback: '100',
    scope: 'api',
    description: 'Crawl: `max_items` when a request omits it (URLs kept before the crawl stops).',
  },
  CRAWL_DEFAULT_MAX_PAGES: {
    parse: integer(1, 100_000),
    fallback: '100',
    scope: 'api',
    description: 'Crawl: `max_pages` when a request omits it (pages fetched, and billed, at most).',
  },
  CRAWL_CONCURRENCY: {
    parse: integer(1, 256),
    fallback: '10',
    scope: 'all',
    description: 'Crawl: pages of one crawl fetched at once by a worker.',
  },
  CRAWL_SLICE_PAGES: {
    parse: integer(25, 1_000),
    fallback: '50',
    scope: 'api',
    description: 'Crawl: pages one slice activity fetches at most (rounded to a multiple of 25).',
  },
  CRAWL_SLICE_WINDOW: {
    parse: integer(1, 16),
    fallback: '3',
    scope: 'api',
    description: 'Crawl: slice activities of one crawl in flight at once.',
  },
  CRAWL_HISTORY_EVENTS: {
    parse: integer(100, 40_000),
    fallback: '2000',
    scope: 'api',
    description: 'Crawl: workflow history events after which a crawl continues as new (bounds history and replay).',
  },
  HOST_CONCURRENCY: {
    parse: integer(1, 256),
    fallback: '16',
    scope: 'all',
    description:
      'Politeness: requests at once to one host (exact host and port), every job, account and process together (per process for a host with no rate, `Crawl-delay` nor back-off).',
  },
  HOST_RATE: {
    parse: decimal(0, 10_000),
    fallback: '0',
    scope: 'all',
    description: 'Politeness: request starts per second to one host, every job, account and process together; `0`: no rate but the host’s own `Crawl-delay` and back-offs.',
  },
  HOST_BUDGETS: {
    parse: hostBudgets,
    fallback: '',
    scope: 'all',
    description:
      'Politeness per host, comma-separated `name=rate[/concurrency]` (`example.com=10/4,api.example.com=2`): a registrable domain shares one budget across its hosts (on top of each host’s own); another name is one exact host.',
  },
  HOST_BACKOFF_MAX_MS: {
    parse: integer(1_000, 86_400_000),
    fallback: '600000',
    scope: 'all',
    description: 'Politeness: longest pause of a host that answers 429 or 503 again and again (the pause doubles from `Retry-After`, else 1 s, up to this).',
  },
  ROBOTS_USER_AGENT: {
    parse: text,
    fallback: 'Fetchplane',
    scope: 'all',
    description: 'The product token matched against robots.txt `User-agent` lines (crawls, Extract discovery, `respect_robots=true`).',
  },
  ROBOTS_CACHE_MINUTES: {
    parse: integer(1, 1_440),
    fallback: '1440',
    scope: 'all',
    description: 'How long a robots.txt (or its absence, a 4xx) is trusted per origin; at most 24 hours.',
  },
  ROBOTS_ERROR_MINUTES: {
    parse: integer(1, 1_440),
    fallback: '10',
    scope: 'all',
    description: 'How long an origin whose robots.txt answers 5xx or nothing is treated as disallowing everything before it is asked again.',
  },
  CRAWL_RETRY_AFTER_MAX_MS: {
    parse: integer(0, 600_000),
    fallback: '60000',
    scope: 'worker',
    description: 'Crawl: longest `Retry-After` a crawl waits for before it retries a page (longer: the page fails).',
  },
  SECRETS_KEY: {
    parse: serverKey,
    scope: 'all',
    description:
      'Server key (32 random bytes, base64) that seals stored webhook signing secrets. Required in production; the local launcher generates one into `DATA_DIR/secrets.key`.',
  },
  WEBHOOK_TIMEOUT_MS: {
    parse: integer(100, 60_000),
    fallback: '10000',
    scope: 'all',
    description: 'Webhooks: deadline of one delivery attempt (connect, send, answer); the receiver should answer 2xx at once.',
  },
  WEBHOOK_RETRY_INITIAL_MS: {
    parse: integer(100, 3_600_000),
    fallback: '10000',
    scope: 'all',
    description: 'Webhooks: wait before the second attempt of a failed delivery; each later wait doubles.',
  },
  WEBHOOK_RETRY_MAX_INTERVAL_MS: {
    parse: integer(1_000, 86_400_000),
    fallback: '3600000',
    scope: 'all',
    description: 'Webhooks: longest wait between two attempts of one delivery.',
  },
  WEBHOOK_RETRY_HOURS: {
    parse: integer(1, 720),
    fallback: '24',
    scope: 'all',
    description: 'Webhooks: how long a delivery is retried before it is recorded as failed.',
  },
  WEBHOOK_CA_FILE: {
    parse: text,
    scope: 'all',
    description: 'PEM file of extra certificate authorities trusted for webhook deliveries only (receivers with a private CA).',
  },
  BATCH_CONCURRENCY: {
    parse: integer(1, 1_000),
    fallback: '32',
    scope: 'worker',
    description: 'Batch: tasks one worker fetches at once, across every run it works on (each run is also held to its plan\'s concurrency).',
  },
  BATCH_SLICES_IN_FLIGHT: {
    parse: integer(1, 64),
    fallback: '6',
    scope: 'all',
    description: 'Batch: slices of one run in flight at once (each a task for any worker, held to the run\'s concurrency in each); at least the number of workers, so one large run uses them all.',
  },
  BATCH_HISTORY_EVENTS: {
    parse: integer(100, 40_000),
    fallback: '4000',
    scope: 'all',
    description: 'Batch: workflow history events after which a run continues as new (or sooner, when Temporal suggests it), as CRAWL_HISTORY_EVENTS for crawls.',
  },
  BATCH_TASK_ATTEMPTS: {
    parse: integer(1, 10),
    fallback: '3',
    scope: 'worker',
    description: 'Batch: attempts of a task whose failure may not happen again (time-out, 429, 5xx, block), with a growing pause between them.',
  },
  BATCH_EXPORT_CHUNK_BYTES: {
    parse: integer(1024, 8 * 1024 * 1024),
    fallback: '4194304',
    scope: 'worker',
    description: 'Batch: bytes of an export\'s file written (and checkpointed) at a time; a retried export resumes after the last chunk written.',
  },
  BATCH_LINK_TTL_MINUTES: {
    parse: integer(1, 10_080),
    fallback: '60',
    scope: 'api',
    description: 'Batch: lifetime of the capability links in results (`result_url`), exports (`download_url`) and input uploads.',
  },
  BATCH_SCHEDULE_MIN_INTERVAL_SECONDS: {
    parse: integer(1, 86_400),
    fallback: '60',
    scope: 'api',
    description: 'Batch: shortest `rate` a scheduled job may fire at (a `rate` of `every` × `unit`, `second` included); shorter ones are refused with 400.',
  },
  MONITOR_MIN_INTERVAL_SECONDS: {
    parse: integer(1, 86_400),
    fallback: '900',
    scope: 'all',
    description: 'Monitors: the shortest interval between a monitor\'s checks, in seconds, for plans whose PLAN_LIMITS set no `monitor_interval_seconds` (the free plan by default; business sets 60). A shorter schedule is refused with 400 naming the minimum.',
  },
  RESULTS_RETENTION_DAYS: {
    parse: integer(1, 3650),
    fallback: '30',
    scope: 'all',
    description: 'Retention: days a crawl, a Batch run and all their data are kept after they ended; also Extract sample pages and webhook deliveries. A Batch task\'s result past it reads as `expired` (its body 410 `result_expired`); then the retention sweep removes them (a removed crawl or run reads as missing).',
  },
  IDEMPOTENCY_RETENTION_HOURS: {
    parse: integer(1, 8760),
    fallback: '24',
    scope: 'worker',
    description: 'Retention: hours an `Idempotency-Key` record is kept.',
  },
  RETENTION_INTERVAL_MINUTES: {
    parse: integer(1, 10_080),
    fallback: '60',
    scope: 'worker',
    description: 'Retention: how often the sweep runs (a Temporal Schedule the worker registers, `fetchplane-retention` in the Web UI).',
  },
  RECONCILE_INTERVAL_MINUTES: {
    parse: integer(1, 1440),
    fallback: '5',
    scope: 'worker',
    description: 'How often the reconciler looks for starts cut short (a record without its workflow, a slot or `Idempotency-Key` left held) and starts or releases them (a Temporal Schedule the worker registers, `fetchplane-reconcile`; the API also runs it once when it starts).',
  },
  RETENTION_BATCH: {
    parse: integer(10, 10_000),
    fallback: '500',
    scope: 'worker',
    description: 'Retention: documents removed per delete (by `_id`), so no sweep holds a long write.',
  },
  STACK_DIR: {
    parse: directory,
    fallback: '.stack',
    scope: 'launcher',
    description: 'Git-ignored cache of built binaries (FerretDB, Temporal CLI virtualenv, workflow bundle).',
  },
  FERRETDB_PORT: {
    parse: port,
    fallback: '27017',
    scope: 'launcher',
    description: 'Port of the local FerretDB when `MONGODB_URL` is unset; `0`: a free one outside the kernel\'s ephemeral range.',
  },
  TEMPORAL_PORT: {
    parse: port,
    fallback: '7233',
    scope: 'launcher',
    description: 'Port of the local Temporal dev server when `TEMPORAL_ADDRESS` is unset; `0`: a free one outside the kernel\'s ephemeral range.',
  },
  TEMPORAL_UI_PORT: {
    parse: port,
    fallback: '8233',
    scope: 'launcher',
    description: 'Port of the local Temporal Web UI; `0`: a free one outside the kernel\'s ephemeral range.',
  },
  RESTART_LIMIT: {
    parse: integer(0, 1_000),
    fallback: '5',
    scope: 'launcher',
    description:
      'Restarts of one crashed component (worker, API, FerretDB, Temporal) the launcher makes within `RESTART_WINDOW_SECONDS`; one failure more and it stops everything and exits with its last log lines.',
  },
  RESTART_WINDOW_SECONDS: {
    parse: integer(1, 86_400),
    fallback: '300',
    scope: 'launcher',
    description: 'The window in which the launcher counts a component\'s failures against `RESTART_LIMIT`.',
  },
  INSTALL_MISSING: {
    parse: boolean,
    fallback: 'true',
    scope: 'launcher',
    description: 'Let the launcher install missing pieces (Chromium with apt-get as root, the Temporal CLI, FerretDB).',
  },
} satisfies Record<string, Variable<unknown>>;

type Variables = typeof variables;
export type ConfigName = keyof Variables;

type ValueOf<N extends ConfigName> = Variables[N] extends Variable<infer T>
  ? Variables[N] extends { fallback: string }
    ? T
    : T | undefined
  : never;

/** `MONGODB_URL` → `mongodbUrl`: every variable becomes a camel-case member of `Config`. */
type CamelTail<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Capitalize<Lowercase<Head>>}${CamelTail<Tail>}`
  : Capitalize<Lowercase<S>>;
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${CamelTail<Tail>}` : Lowercase<S>;

const camel = (name: string): string =>
  name.toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** Members derived from others after parsing (their variables may be unset). */
interface Derived {
  /** `PUBLIC_URL`, else `http://localhost:$PORT`. */
  publicUrl: string;
  /** `DOCS_URL`, else `$PUBLIC_URL/docs`. */
  docsUrl: string;
}

export type Config = Readonly<Omit<{ [N in ConfigName as Camel<N>]: ValueOf<N> }, keyof Derived> & Derived>;

export const CONFIG_VARIABLES: ReadonlyArray<{ name: ConfigName; fallback?: string; description: string; scope: string }> =
  Object.entries(variables).map(([name, variable]) => ({
    name: name as ConfigName,
    fallback: (variable as Variable<unknown>).fallback,
    description: variable.description,
    scope: variable.scope,
  }));

export type Environment = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Environment): Config {
  const raw = {} as Record<string, unknown>;
  for (const [name, variable] of Object.entries(variables) as Array<[ConfigName, Variable<unknown>]>) {
    const given = env[name];
    const source = given !== undefined && given.trim() !== '' ? given : variable.fallback;
    if (source === undefined) {
      raw[name] = undefined;
      continue;
    }
    try {
      raw[name] = variable.parse(source);
    } catch (error) {
      throw new ConfigError(name, (error as Error).message);
    }
  }
  const values = Object.fromEntries(Object.entries(raw).map(([name, value]) => [camel(name), value]));
  const plans = new Set(['free', ...(values.plans as Array<{ name: string }>).map((plan) => plan.name)]);
  const unknownPlan = (values.extractPlans as string[]).find((name) => name !== '*' && !plans.has(name));
  if (unknownPlan !== undefined) throw new ConfigError('EXTRACT_PLANS', `"${unknownPlan}" is not a plan (plans: ${[...plans].join(', ')})`);
  const publicUrl = (values.publicUrl as string | undefined) ?? `http://localhost:${String(values.port)}`;
  const docsUrl = (values.docsUrl as string | undefined) ?? `${publicUrl}/docs`;
  return Object.freeze({ ...values, publicUrl, docsUrl }) as Config;
}

let current: Config | undefined;

/** The process's configuration, read from its environment on first use (`loadConfig` reads any environment given). */
export function processConfig(): Config {
  current ??= loadConfig(process.env);
  return current;
}

/**
 * The process's configuration once its listener is bound: with PORT=0 the kernel picked the port, and
 * the URLs derived from PORT (PUBLIC_URL, DOCS_URL when unset) must name the port it picked.
 */
export function processConfigOnPort(port: number): Config {
  if (processConfig().port !== port) current = loadConfig({ ...process.env, PORT: String(port) });
  return processConfig();
}

/**
 * The environment for a child process: this process's environment with `overrides` on top.
 * Lives here so that only this module touches `process.env`.
 */
export function childEnvironment(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
