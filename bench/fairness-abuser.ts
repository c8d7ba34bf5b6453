/**
 * The abusive side of bench/fairness.ts, in its own process so that its loops never share the
 * measuring process's event loop. Driven over IPC: `{ run: true }` starts (or resumes) the loops,
 * `{ run: false }` pauses them and answers the answers counted so far by status, `{ stop: true }` ends.
 *
 * Arguments: `--api <url> --keys <key,key,...> --site <url> --kind <kind> --loops <n>`, where the kind
 * is one of ABUSES below (each loop runs n times at once per key; `--site` is the bench's local site:
 * `/steady`, `/nested`, `/limited`). With the answers it sends, per phase, the most requests it started
 * within any 50 ms after the phase's first 2 s: how bursty its load is, whatever else the machine runs.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Agent, setGlobalDispatcher } from 'undici';

const { values } = parseArgs({ options: { api: { type: 'string' }, keys: { type: 'string' }, site: { type: 'string' }, kind: { type: 'string' }, loops: { type: 'string' } } });
const api = values.api ?? '';
const keys = (values.keys ?? '').split(',').filter(Boolean);
const site = values.site ?? '';
const kind = values.kind ?? 'creations';
const parallel = Math.min(16, Math.max(1, Number(values.loops ?? 2)));
// The abuser comes from a network of its own (127.1.0.0/24, still loopback), as it would in life: what
// is limited per client network (failed key look-ups, signups) then limits it, not the tenant it is measured against.
setGlobalDispatcher(new Agent({ connect: { localAddress: '127.1.0.1' } }));

const statuses = new Map<string, number>();
const count = (what: string, status: number, code?: string): void => {
  const name = `${what} ${status}${code ? ` ${code}` : ''}`;
  statuses.set(name, (statuses.get(name) ?? 0) + 1);
};
/** The problem code of a refusal (REST: `code`; MCP: `error.data.code`), so budget and limit refusals are told apart. */
const codeOf = (status: number, text: string): string | undefined => {
  if (status < 400) return undefined;
  try {
    const body = JSON.parse(text) as { code?: string; error?: { data?: { code?: string } } };
    return body.code ?? body.error?.data?.code;
  } catch {
    return undefined;
  }
};
const json = (key: string) => ({ 'X-API-Key': key, 'Content-Type': 'application/json' });
const fetchOf = (key: string, url: string, extra: string) => `${api}/v1/?apikey=${key}&url=${encodeURIComponent(url)}${extra}`;

type Loop = (key: string) => Promise<void>;

/**
 * What each kind of abuse sends, per loop. `once` runs when the phase starts (jobs to a paused host
 * are made once and then wait); `loops` run for as long as the phase is on.
 */
const ABUSES: Record<string, { once?: (key: string) => Promise<void>; loops: Loop[] }> = {
  /** Creations an account is limited in: MCP sessions, scheduled jobs, CSV inputs. */
  creations: {
    loops: [
      async (key) => {
        const response = await fetch(`${api}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'abuser', version: '1' } } }),
        });
        count('mcp session', response.status, codeOf(response.status, await response.text()));
      },
      async (key) => {
        const response = await fetch(`${api}/v1/jobs`, { method: 'POST', headers: json(key), body: JSON.stringify({ type: 'scheduled', schedule: { rate: { every: 1, unit: 'minute' } }, tasks: [{ url: `${site}/steady` }] }) });
        count('scheduled job', response.status, codeOf(response.status, await response.text()));
      },
      async (key) => {
        const created = await fetch(`${api}/v1/job_inputs`, { method: 'POST', headers: json(key), body: JSON.stringify({ type: 'csv', csv: { fields: { url: 0 } } }) });
        const text = await created.text();
        count('input', created.status, codeOf(created.status, text));
        const body = (created.status === 201 ? JSON.parse(text) : {}) as { upload?: { url: string } };
        if (body.upload) {
          const uploaded = await fetch(body.upload.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: `${site}/steady\n`.repeat(1000) });
          await uploaded.arrayBuffer();
          count('upload', uploaded.status);
        }
      },
    ],
  },
  /** Reads within the account's request budget, as fast as it lets them: job listings. */
  flood: {
    loops: [
      async (key) => {
        const response = await fetch(`${api}/v1/jobs?limit=100`, { headers: { 'X-API-Key': key } });
        count('job listing', response.status, codeOf(response.status, await response.text()));
      },
    ],
  },
  /** Well-formed keys nobody was given, each a key look-up if nothing stops it first. */
  keys: {
    loops: [
      async () => {
        const response = await fetch(`${api}/v1/jobs`, { headers: { 'X-API-Key': randomBytes(20).toString('hex') } });
        count('random key', response.status, codeOf(response.status, await response.text()));
      },
    ],
  },
  /** A 9.8 MB page nested 900,000 deep, as main content, Markdown and css_extractor in turn. */
  pages: {
    loops: [
      async (key) => {
        const shapes = ['&main_content=true', '&response_type=markdown', `&css_extractor=${encodeURIComponent('{"t":"p"}')}`];
        const response = await fetch(fetchOf(key, `${site}/nested`, shapes[Math.floor(Math.random() * shapes.length)]!));
        count('nested page', response.status, codeOf(response.status, await response.text()));
      },
    ],
  },
  /** Batch jobs at a host that answers 429 for ten minutes, made once: their tasks wait at the gate. */
  paused: {
    once: async (key) => {
      for (let job = 0; job < 3; job++) {
        const tasks = Array.from({ length: 100 }, (_, n) => ({ url: `${site}/limited/${job}/${n}` }));
        const response = await fetch(`${api}/v1/jobs`, { method: 'POST', headers: json(key), body: JSON.stringify({ type: 'regular', status: 'closed', tasks }) });
        count('paused-host job', response.status, codeOf(response.status, await response.text()));
      }
    },
    loops: [],
  },
};

/**
 * When each request of the phase started (ms), and the most started within any BURST_MS of each phase
 * so far, past its first SETTLE_MS (a phase opens on a full bucket: `request_burst` at once, by design).
 */
const starts: number[] = [];
const BURST_MS = 50;
const SETTLE_MS = 2_000;
let phaseStart = 0;
const bursts: number[] = [];
const busiest = (times: number[]): number => {
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while ((times[last] as number) - (times[first] as number) >= BURST_MS) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
};

let running = false;
let ended = false;
// One promise all paused loops wait on, replaced after each wake.
let wake: () => void = () => undefined;
let paused = new Promise<void>((resolve) => (wake = resolve));
const resumed = (): Promise<void> => paused;
const wakeAll = (): void => {
  wake();
  paused = new Promise<void>((resolve) => (wake = resolve));
};

const abuse = ABUSES[kind];
if (!abuse) throw new Error(`unknown abuse kind ${kind}: one of ${Object.keys(ABUSES).join(', ')}`);
let started = false;

async function loop(work: Loop, key: string): Promise<void> {
  while (!ended) {
    if (!running) {
      await resumed();
      continue;
    }
    starts.push(performance.now());
    await work(key).catch(() => count('error', 0));
  }
}

const loops = keys.flatMap((key) => abuse.loops.flatMap((work) => Array.from({ length: parallel }, () => loop(work, key))));
process.on('message', (message: { run?: boolean; stop?: boolean }) => {
  if (message.stop) {
    ended = true;
    running = false;
    wakeAll();
    void Promise.all(loops).then(() => process.disconnect?.());
    return;
  }
  running = message.run === true;
  if (running && !started && abuse.once) {
    started = true;
    void Promise.all(keys.map((key) => abuse.once?.(key).catch(() => count('error', 0))));
  }
  if (running) {
    phaseStart = performance.now();
    wakeAll();
  }
  if (!running) {
    bursts.push(busiest(starts.splice(0).filter((at) => at - phaseStart >= SETTLE_MS)));
    process.send?.({ statuses: Object.fromEntries(statuses), bursts });
  }
});
process.send?.({ ready: true });
