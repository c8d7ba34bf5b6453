/**
 * One MCP session over several API processes (API_PROCESSES=2 on one port): a session opened on one
 * process is served by the other, and one ended or expired is refused by both. Which process served a
 * request is read from /proc, not guessed: each request goes on its own connection, and the process
 * holding the server side of that connection is the one that answered.
 */
import { readdirSync, readFileSync, readlinkSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../base/db';
import { createLogger } from '../../base/log';
import { ManagedProcess } from '../../scripts/stack/process';
import { childPids } from '../../scripts/stack/proc';
import { startBrowserSite, startPrivateListener } from '../fixtures/browser/site';
import { serviceConfig, type TestAccount } from '../helpers/app';
import { freePort } from '../helpers/ports';
import { runPythonClient } from '../helpers/python-mcp';
import { testStack } from '../helpers/stack';
import { fetchAccount } from '../fetch/helpers';

interface Answer {
  status: number;
  sessionId: string | undefined;
  /** The JSON-RPC message of the answer (the SSE stream's last `data:`, or the JSON body). */
  message: { result?: Record<string, unknown>; error?: { message: string } } | undefined;
  /** The API process that served the request. */
  pid: number;
}

/** `127.0.0.1:port` as /proc/net/tcp writes it. */
const procAddress = (port: number): string => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;

/** The process, among `candidates`, holding the server side of the loopback connection from `clientPort` to `serverPort`. */
function servingPid(serverPort: number, clientPort: number, candidates: number[]): number {
  const line = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((row) => row.trim().split(/\s+/))
    .find((fields) => fields[1] === procAddress(serverPort) && fields[2] === procAddress(clientPort));
  const inode = line?.[9];
  if (!inode) throw new Error(`no server socket for the connection from port ${clientPort}`);
  for (const pid of candidates) {
    const folder = `/proc/${pid}/fd`;
    for (const fd of readdirSync(folder)) {
      try {
        if (readlinkSync(path.join(folder, fd)) === `socket:[${inode}]`) return pid;
      } catch {
        // The descriptor closed while the folder was read.
      }
    }
  }
  throw new Error(`no API process holds socket ${inode}`);
}

describe('MCP over several API processes', function () {
  this.timeout(180_000);
  let folder: string;
  let api: ManagedProcess;
  let port: number;
  let account: TestAccount;
  let db: Database;

  before(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'fetchplane-mcp-cluster-'));
    port = await freePort();
    const stackApi = testStack().component('api').spec;
    api = new ManagedProcess({ ...stackApi, name: 'api-mcp-cluster', env: { ...stackApi.env, PORT: String(port), API_PROCESSES: '2' }, logDir: folder, runDir: folder });
    await api.start();
    account = await fetchAccount();
    db = await openDatabase(serviceConfig(), createLogger('error', {}, () => undefined));
  });

  after(async () => {
    await db?.close();
    await api?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  const processes = (): number[] => childPids(api.pid as number);

  /** One request on a connection of its own, answered by whichever process the kernel gave it to. */
  function send(method: 'POST' | 'DELETE', sessionId: string | undefined, body?: unknown): Promise<Answer> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    return new Promise<Answer>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method,
          agent,
          headers: {
            authorization: `Bearer ${account.key}`,
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
            ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            try {
              // The connection is still open (kept alive): its server side names the process.
              const pid = servingPid(port, request.socket?.localPort ?? 0, processes());
              const data = text.split('\n').filter((row) => row.startsWith('data: ') && row.length > 6);
              const raw = data.length > 0 ? (data.at(-1) ?? '').slice(6) : text;
              const header = response.headers['mcp-session-id'];
              resolve({ status: response.statusCode ?? 0, sessionId: typeof header === 'string' ? header : undefined, message: raw ? (JSON.parse(raw) as Answer['message']) : undefined, pid });
            } catch (error) {
              reject(error as Error);
            } finally {
              agent.destroy();
            }
          });
        },
      );
      request.on('error', (error) => {
        agent.destroy();
        reject(error);
      });
      request.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  let nextId = 1;
  const rpc = (sessionId: string, method: string, params: Record<string, unknown> = {}): Promise<Answer> =>
    send('POST', sessionId, { jsonrpc: '2.0', id: nextId++, method, params });

  /** Repeats `request` on fresh connections until every process has answered it once (bounded); returns the answers by process. */
  async function onEveryProcess(request: () => Promise<Answer>): Promise<Map<number, Answer>> {
    const answers = new Map<number, Answer>();
    for (let attempt = 0; attempt < 40 && answers.size < 2; attempt++) {
      const answer = await request();
      answers.set(answer.pid, answer);
    }
    expect([...answers.keys()].sort(), 'both processes answered').to.deep.equal(processes().sort());
    return answers;
  }

  async function open(): Promise<{ sessionId: string; pid: number }> {
    const init = await send('POST', undefined, {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'fetchplane-cluster-test', version: '1.0.0' } },
    });
    expect(init.status).to.equal(200);
    expect(init.message?.result?.protocolVersion).to.equal(LATEST_PROTOCOL_VERSION);
    const sessionId = init.sessionId ?? '';
    expect(sessionId).to.not.equal('');
    const initialized = await send('POST', sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(initialized.status).to.equal(202);
    return { sessionId, pid: init.pid };
  }

  it('serves a session opened on one process from the other, and refuses it on both once deleted', async () => {
    expect(processes()).to.have.length(2);
    const { sessionId, pid: opener } = await open();

    const lists = await onEveryProcess(() => rpc(sessionId, 'tools/list'));
    for (const [pid, answer] of lists) {
      expect(answer.status, `tools/list on ${pid}`).to.equal(200);
      expect((answer.message?.result?.tools as Array<{ name: string }>).map((tool) => tool.name)).to.include('fetch_page');
    }

    // A tool call on the process that did not open the session, acting for the account that did.
    let call: Answer | undefined;
    for (let attempt = 0; attempt < 40; attempt++) {
      call = await rpc(sessionId, 'tools/call', { name: 'plan_usage', arguments: {} });
      expect(call.status).to.equal(200);
      if (call.pid !== opener) break;
    }
    expect(call?.pid).to.not.equal(opener);
    expect(call?.message?.result?.isError ?? false).to.equal(false);
    const [content] = call?.message?.result?.content as Array<{ type: string; text: string }>;
    expect((JSON.parse(content?.text ?? '{}') as { plan?: { name?: string } }).plan?.name).to.be.a('string');

    const ended = await send('DELETE', sessionId);
    expect(ended.status).to.equal(200);
    const refused = await onEveryProcess(() => rpc(sessionId, 'tools/list'));
    for (const [pid, answer] of refused) expect(answer.status, `tools/list on ${pid} after DELETE`).to.equal(404);
  });

  it('refuses an expired session on both processes, including the one holding it', async () => {
    const { sessionId } = await open();
    // Both processes hold the session before it expires.
    for (const [, answer] of await onEveryProcess(() => rpc(sessionId, 'tools/list'))) expect(answer.status).to.equal(200);
    // Thirty idle minutes, as the store sees them.
    const aged = await db.db.collection('mcp_sessions').updateOne({ _id: sessionId as never }, { $set: { expires_at: new Date(Date.now() - 1_000) } });
    expect(aged.matchedCount).to.equal(1);
    for (const [pid, answer] of await onEveryProcess(() => rpc(sessionId, 'tools/list'))) expect(answer.status, `tools/list on ${pid} after expiry`).to.equal(404);
  });

  it('serves the SDK client whichever process its connections reach', async () => {
    const client = new Client({ name: 'fetchplane-cluster-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${account.key}` } } }));
    try {
      // Concurrent requests open several connections, spread over both processes.
      const lists = await Promise.all(Array.from({ length: 6 }, () => client.listTools()));
      for (const { tools } of lists) expect(tools.map((tool) => tool.name)).to.include('plan_usage');
      const usage = await client.callTool({ name: 'plan_usage', arguments: {} });
      expect(usage.isError ?? false).to.equal(false);
    } finally {
      await client.close();
    }
  });

  it('serves the Python mcp client whichever process its connections reach', async function () {
    this.timeout(300_000);
    const privateListener = await startPrivateListener();
    const site = await startBrowserSite(privateListener.origin);
    try {
      const report = await runPythonClient({
        transport: 'http',
        key: account.key,
        url: `http://127.0.0.1:${port}/mcp`,
        page: site.at('/', 'open.fixture.test'),
        refused: `http://127.0.0.2:${site.port}/`,
      });
      expect(report.tools).to.include('fetch_page');
      expect(report.page.isError).to.equal(false);
      expect(report.page.text).to.contain('# Welcome, anyone');
      expect([report.screenshot.type, report.screenshot.mimeType]).to.deep.equal(['image', 'image/png']);
      expect(report.refused.isError).to.equal(true);
    } finally {
      await site.close();
      await privateListener.close();
    }
  });
});
