/**
 * One delivery attempt: a `POST` of the exact event bytes to the receiver, through an undici agent whose
 * connections pass the target policy at connect time (the address dialled is the address checked).
 * Redirects are never followed, the attempt has one short deadline, and at most a few KB of the
 * receiver's answer are read. The outcome is a value with an error tag in the vocabulary the clients
 * know (`http_4xx:<code>`, `http_5xx:<code>`, `timeout`, `tls`, `refused_target`, `transport_error:<detail>`).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import type { TargetGuard } from '../safety';
import { checkWebhookUrl } from './target';

export const WEBHOOK_USER_AGENT = 'service-webhook/v1';
/** Receivers answer quickly with an empty or short body; the rest is never read. */
const RESPONSE_BYTES_READ = 4 * 1024;

export interface AttemptOutcome {
  delivered: boolean;
  status_code?: number;
  elapsed_ms: number;
  error?: string;
}

export interface WebhookPoster {
  post(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

export interface PosterOptions {
  guard: TargetGuard;
  timeoutMs: number;
  /** PEM file of extra certificate authorities trusted for deliveries only (private receivers, tests). */
  caFile?: string;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|ERR_OSSL_)/;

function causeCode(error: unknown): string | undefined {
  for (let current = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === 'string') return current.code;
    current = current.cause as typeof current;
  }
  return undefined;
}

function failureTag(error: unknown, timedOut: boolean): string {
  const code = causeCode(error);
  if (code === 'ERR_TARGET_FORBIDDEN') return 'refused_target';
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (code && TLS_CODES.test(code)) return 'tls';
  return `transport_error:${(code ?? 'unknown').toLowerCase()}`;
}

const statusTag = (status: number): string | undefined =>
  status >= 200 && status < 300 ? undefined : `http_${Math.floor(status / 100)}xx:${status}`;

export function createWebhookPoster(options: PosterOptions): WebhookPoster {
  const ca = options.caFile ? readFileSync(options.caFile, 'utf8') : undefined;
  const agent = new Agent({
    connect: { lookup: options.guard.lookup, timeout: options.timeoutMs, ...(ca ? { ca: [ca] } : {}) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4_000,
  });

  return {
    async post(url, body, headers) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const target = await checkWebhookUrl(options.guard, url);
      if (!target.ok) return { delivered: false, elapsed_ms: elapsed(), error: target.tag === 'unresolvable' ? 'transport_error:unresolvable' : 'refused_target' };
      const deadline = AbortSignal.timeout(options.timeoutMs);
      try {
        const response = await request(target.url, {
          method: 'POST',
          dispatcher: agent,
          signal: deadline,
          headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, ...headers },
          body,
        });
        await drain(response.body);
        const error = statusTag(response.statusCode);
        return { delivered: error === undefined, status_code: response.statusCode, elapsed_ms: elapsed(), ...(error ? { error } : {}) };
      } catch (error) {
        return { delivered: false, elapsed_ms: elapsed(), error: failureTag(error, deadline.aborted) };
      }
    },
    close: () => agent.close(),
  };
}

/** Reads at most a few KB of the answer, then lets the connection go. */
async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read >= RESPONSE_BYTES_READ) break;
    }
  } catch {
    // The status is what counts; a body cut short changes nothing.
  } finally {
    body.destroy();
  }
}
