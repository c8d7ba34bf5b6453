/**
 * Requests Node's HTTP parser rejects before Koa sees them (headers too large, malformed request
 * lines) still get a problem document instead of a bare status line.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { newRequestId } from '../../core/ids';
import { problem, type ApiError } from '../../core/errors';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem-middleware';

function parserProblem(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return problem('request_header_fields_too_large', 'The request headers exceed the accepted size.');
  }
  return problem('invalid_request', 'The HTTP request could not be parsed.');
}

export function answerClientErrors(server: Server, docsUrl: string): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const requestId = newRequestId();
    const failure = parserProblem(error.code);
    const body = problemDocument(failure, requestId, docsUrl);
    socket.end(
      `HTTP/1.1 ${failure.status} ${failure.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
