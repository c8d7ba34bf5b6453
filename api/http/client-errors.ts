/**
 * What Node's HTTP server answers by itself, answered as ours: requests its parser rejects (headers
 * too large, malformed request lines or chunks, requests that took too long to arrive), `Expect`
 * values other than `100-continue`, `CONNECT`, and HTTP/1.1 requests without `Host` all get a problem
 * document (or the agent surfaces' `{error, message}`) instead of a bare status line or a reset.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { newRequestId } from '../../base/ids';
import { markTimedOut } from './body';
import { problem, type ApiError } from '../../base/errors';
import { agentErrorBody, isAgentPath, PROBLEM_CONTENT_TYPE, problemDocument } from './problem-middleware';

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout', 417: 'Expectation Failed', 431: 'Request Header Fields Too Large' };

function parserProblem(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return problem('request_header_fields_too_large', 'The request headers exceed the accepted size.');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return problem('request_timeout', 'The request did not arrive in time.');
  return problem('invalid_request', 'The HTTP request could not be parsed.');
}

/** The path of the request line, as far as it was received. */
function pathOf(raw: Buffer | undefined): string {
  const line = raw?.subarray(0, 2048).toString('latin1').split('\r\n')[0] ?? '';
  return line.split(' ')[1]?.split('?')[0] ?? '';
}

/** A whole response, with `Connection: close`, for a socket Node has not made a response for. */
function rawAnswer(failure: ApiError, path: string, docsUrl: string): string {
  const requestId = newRequestId();
  const agent = isAgentPath(path);
  const body = agent ? agentErrorBody(failure) : problemDocument(failure, requestId, docsUrl);
  return (
    `HTTP/1.1 ${failure.status} ${REASONS[failure.status] ?? 'Error'}\r\n` +
    `Content-Type: ${agent ? 'application/json; charset=utf-8' : PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Answers a request Node parsed but the app never sees, closing the connection (its body stays unread). */
function answer(req: IncomingMessage, res: ServerResponse, failure: ApiError, docsUrl: string): void {
  const requestId = newRequestId();
  const agent = isAgentPath((req.url ?? '').split('?')[0] ?? '');
  const body = agent ? agentErrorBody(failure) : problemDocument(failure, requestId, docsUrl);
  res.writeHead(failure.status, {
    'Content-Type': agent ? 'application/json; charset=utf-8' : PROBLEM_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
    Connection: 'close',
  });
  res.end(body);
}

export function answerClientErrors(server: Server, docsUrl: string): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') markTimedOut(socket);
    // A response already under way cannot be followed by another one (Node's own handler checks the same).
    const underWay = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!socket.writable || error.code === 'ECONNRESET' || underWay) {
      socket.destroy();
      return;
    }
    socket.end(rawAnswer(parserProblem(error.code), pathOf(error.rawPacket), docsUrl));
  });
  // Without a listener Node answers 417 with an empty body.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    answer(req, res, problem('expectation_failed', 'Only "Expect: 100-continue" is supported.'), docsUrl);
  });
  // Without a listener Node drops CONNECT requests on the floor.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const failure = problem('method_not_allowed', 'CONNECT is not supported: this is not a proxy.');
    socket.end(rawAnswer(failure, '', docsUrl));
  });
}

/**
 * HTTP/1.1 requires `Host`; Node's own check (`requireHostHeader`) answers a bare 400, so the server
 * turns it off and this listener wrapper answers the problem document instead.
 */
export function requireHost(listener: (req: IncomingMessage, res: ServerResponse) => void, docsUrl: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      answer(req, res, problem('invalid_request', 'An HTTP/1.1 request must carry a Host header.'), docsUrl);
      return;
    }
    listener(req, res);
  };
}
