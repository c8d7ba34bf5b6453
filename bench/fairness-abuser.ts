/**
 * The abusive account of bench/fairness.ts, in its own process so that its loops never share the
 * measuring process's event loop. Driven over IPC: `{ run: true }` starts (or resumes) the loops,
 * `{ run: false }` pauses them and answers the answers counted so far by status, `{ stop: true }` ends.
 *
 * Arguments: `--api <url> --key <key> --page <url> --loops <n>` (each loop kind runs n times at once).
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { api: { type: 'string' }, key: { type: 'string' }, page: { type: 'string' }, loops: { type: 'string' } } });
const api = values.api ?? '';
const key = values.key ?? '';
const page = values.page ?? '';
const parallel = Math.min(8, Math.max(1, Number(values.loops ?? 2)));

const statuses = new Map<string, number>();
const count = (what: string, status: number, code?: string): void => {
  const name = `${what} ${status}${code ? ` ${code}` : ''}`;
  statuses.set(name, (statuses.get(name) ?? 0) + 1);
};
/** The problem code of a refusal (REST: `code`; MCP: `error.data.code`), so budget and limit refusals are told apart. */
const codeOf = (status: number, text: string): string | undefined => {
  if (status !== 429) return undefined;
  try {
    const body = JSON.parse(text) as { code?: string; error?: { data?: { code?: string } } };
    return body.code ?? body.error?.data?.code;
  } catch {
    return undefined;
  }
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

const json = { 'X-API-Key': key, 'Content-Type': 'application/json' };
const kinds: Array<() => Promise<void>> = [
  async () => {
    const response = await fetch(`${api}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'abuser', version: '1' } } }),
    });
    count('mcp session', response.status, codeOf(response.status, await response.text()));
  },
  async () => {
    const response = await fetch(`${api}/v1/jobs`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'scheduled', schedule: { rate: { every: 1, unit: 'minute' } }, tasks: [{ url: page }] }) });
    count('scheduled job', response.status, codeOf(response.status, await response.text()));
  },
  async () => {
    const created = await fetch(`${api}/v1/job_inputs`, { method: 'POST', headers: json, body: JSON.stringify({ type: 'csv', csv: { fields: { url: 0 } } }) });
    const text = await created.text();
    count('input', created.status, codeOf(created.status, text));
    const body = (created.status === 201 ? JSON.parse(text) : {}) as { upload?: { url: string } };
    if (body.upload) {
      const uploaded = await fetch(body.upload.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: `${page}\n`.repeat(1000) });
      await uploaded.arrayBuffer();
      count('upload', uploaded.status);
    }
  },
];

async function loop(kind: () => Promise<void>): Promise<void> {
  while (!ended) {
    if (!running) {
      await resumed();
      continue;
    }
    await kind().catch(() => count('error', 0));
  }
}

const loops = kinds.flatMap((kind) => Array.from({ length: parallel }, () => loop(kind)));
process.on('message', (message: { run?: boolean; stop?: boolean }) => {
  if (message.stop) {
    ended = true;
    running = false;
    wakeAll();
    void Promise.all(loops).then(() => process.disconnect?.());
    return;
  }
  running = message.run === true;
  if (running) wakeAll();
  if (!running) process.send?.({ statuses: Object.fromEntries(statuses) });
});
process.send?.({ ready: true });
