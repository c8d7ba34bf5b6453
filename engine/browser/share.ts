/**
 * One browser per machine: the processes of one service (the API, the worker) render on one Chromium.
 * The first process to render binds a Unix socket in the abstract namespace, named after the data
 * folder, and becomes the host: its pool renders its own pages and those the others send it, so
 * per-account context reuse, the page limit and the idle close apply to the machine. The others are
 * clients: their renders go over the socket as one JSON line each way (Buffers in base64), and a
 * cancelled render sends a cancel. The name is bound atomically and vanishes with the host, so a dead
 * host leaves nothing stale; a client whose host went away before answering renders again, taking the
 * host's place. A client proves it belongs to the service with a token the host writes into the data
 * folder (mode 0600) before it listens: abstract sockets have no file permissions of their own.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../../base/log';
import { renderFailure, type RenderRequest, type RenderResult } from './types';

export interface ShareOptions {
  /** The service's data folder: names the socket and holds the token. */
  dataDir: string;
  /**
   * What a render depends on in the hosting process (name overrides, allowed private targets, proxy
   * pools): processes that differ in it never share a browser, since the host's would apply.
   */
  profile?: string;
  log?: Logger;
}

type Local = (request: RenderRequest) => Promise<RenderResult>;
type Role = { kind: 'host'; server: net.Server } | { kind: 'client'; link: Link };

interface Message {
  id: number;
  token?: string;
  request?: RenderRequest;
  result?: RenderResult;
  cancel?: boolean;
}

const TOKEN_FILE = 'browser-host.token';

/** Buffers travel as `{ $b64 }`. */
const encode = (message: Message): string =>
  `${JSON.stringify(message, function (this: Record<string, unknown>, key: string, value: unknown) {
    // Seen before Buffer's own toJSON turned it into an array of numbers.
    const raw = this[key];
    return Buffer.isBuffer(raw) ? { $b64: raw.toString('base64') } : value;
  })}\n`;
const decode = (line: string): Message =>
  JSON.parse(line, (_key, value: unknown) => {
    const encoded = value as { $b64?: unknown };
    return encoded && typeof encoded.$b64 === 'string' ? Buffer.from(encoded.$b64, 'base64') : value;
  }) as Message;

/** Calls `each` with every complete line the socket sends. */
function lines(socket: net.Socket, each: (line: string) => void): void {
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (line) each(line);
    }
  });
}

/** A client's connection to the host: renders in flight by id. */
class Link {
  private next = 1;
  private readonly waiting = new Map<number, (result: RenderResult | undefined) => void>();
  closed = false;

  constructor(readonly socket: net.Socket) {
    lines(socket, (line) => {
      const message = decode(line);
      this.waiting.get(message.id)?.(message.result);
    });
    socket.on('close', () => {
      this.closed = true;
      for (const done of this.waiting.values()) done(undefined);
    });
    socket.on('error', () => undefined);
  }

  /** The host's result, or undefined when the host went away before answering. */
  send(request: RenderRequest, token: string): Promise<RenderResult | undefined> {
    const id = this.next++;
    const { signal, ...rest } = request;
    return new Promise((resolve) => {
      const onAbort = (): void => void this.socket.write(encode({ id, cancel: true }));
      this.waiting.set(id, (result) => {
        this.waiting.delete(id);
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.socket.write(encode({ id, token, request: rest }));
      if (signal?.aborted) onAbort();
    });
  }
}

export class RenderShare {
  private role: Promise<Role> | undefined;
  private serve: Local | undefined;
  private closed = false;
  private readonly sockets = new Set<net.Socket>();
  private readonly address: string;
  private readonly tokenPath: string;
  private token = '';

  constructor(private readonly options: ShareOptions) {
    const folder = path.resolve(options.dataDir);
    this.address = `\0fetchplane-browser-${createHash('sha256').update(folder).update('\0').update(options.profile ?? '').digest('hex').slice(0, 24)}`;
    this.tokenPath = path.join(folder, TOKEN_FILE);
  }

  /** Whether this process hosts the machine's browser now (undefined before its first render). */
  async hosting(): Promise<boolean | undefined> {
    return this.role ? (await this.role).kind === 'host' : undefined;
  }

  /** Renders `request` on the machine's browser: here when this process hosts it, else on the host. */
  async render(request: RenderRequest, local: Local): Promise<RenderResult> {
    if (this.closed) return local(request);
    for (let attempt = 0; attempt < 3; attempt++) {
      const role = await this.elect(local);
      if (role.kind === 'host') return local(request);
      const result = await role.link.send(request, this.token);
      if (result) return result;
      // The host went away before answering: the next attempt takes its place or finds the new one.
      this.role = undefined;
      if (request.signal?.aborted) return renderFailure('aborted', 'the request was cancelled');
    }
    return local(request);
  }

  /** Stops serving other processes (their renders then take this host's place) and drops the link. */
  async close(): Promise<void> {
    this.closed = true;
    const role = await this.role?.catch(() => undefined);
    for (const socket of this.sockets) socket.destroy();
    if (role?.kind === 'host') await new Promise((resolve) => role.server.close(resolve));
    if (role?.kind === 'client') role.link.socket.destroy();
  }

  private elect(local: Local): Promise<Role> {
    this.serve ??= local;
    const current = this.role;
    if (current) {
      return current.then((role) => (role.kind === 'client' && role.link.closed ? ((this.role = undefined), this.elect(local)) : role));
    }
    const role = this.host().catch(() => this.connect());
    this.role = role;
    role.catch(() => {
      if (this.role === role) this.role = undefined;
    });
    return role;
  }

  private async host(): Promise<Role> {
    const server = net.createServer((socket) => this.accept(socket));
    const token = randomBytes(24).toString('hex');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Bound: ours alone. The token is written before anyone can have read it as ours.
    writeFileSync(this.tokenPath, token, { mode: 0o600 });
    this.token = token;
    this.options.log?.info('hosting the browser for the processes of this service');
    return { kind: 'host', server };
  }

  private async connect(): Promise<Role> {
    const socket = net.connect(this.address);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    this.token = readFileSync(this.tokenPath, 'utf8').trim();
    return { kind: 'client', link: new Link(socket) };
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    const running = new Map<number, AbortController>();
    socket.on('close', () => {
      this.sockets.delete(socket);
      for (const controller of running.values()) controller.abort();
    });
    socket.on('error', () => undefined);
    lines(socket, (line) => {
      const message = decode(line);
      if (message.cancel) return void running.get(message.id)?.abort();
      if (message.token !== this.token || !message.request || !this.serve) return void socket.destroy();
      const controller = new AbortController();
      running.set(message.id, controller);
      void this.serve({ ...message.request, signal: controller.signal })
        .catch((): RenderResult => renderFailure('internal', 'the page could not be rendered'))
        .then((result) => {
          running.delete(message.id);
          if (!socket.destroyed) socket.write(encode({ id: message.id, result }));
        });
    });
  }
}
