// Requests node:http refuses before any handler sees them (a malformed request line, a bad
// Content-Length, headers over the size limit): answered in the error envelope when no response
// is under way on the connection, and then the connection is closed.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { statusOf, type TAppErrorCode } from '../../contracts/errors.ts';
import { excerpt } from '../trpc/errors.ts';
import { errorBody } from './io.ts';

const RESPONSES_IN_FLIGHT = Symbol('responsesInFlight');
const CLOSE_WHEN_DONE = Symbol('closeWhenDone');
type TrackedSocket = Duplex & { [RESPONSES_IN_FLIGHT]?: number; [CLOSE_WHEN_DONE]?: boolean };

/**
 * Counts the responses a connection owes, so that a parse error is answered only between
 * responses, never in the middle of one (node's own rule, "nothing written yet", would leave
 * every keep-alive connection's second bad request unanswered).
 */
export const responseStarted = (socket: Duplex): void => {
  const tracked = socket as TrackedSocket;
  tracked[RESPONSES_IN_FLIGHT] = (tracked[RESPONSES_IN_FLIGHT] ?? 0) + 1;
};

export const responseFinished = (socket: Duplex): void => {
  const tracked = socket as TrackedSocket;
  tracked[RESPONSES_IN_FLIGHT]! -= 1;
  // Bytes after a request that cannot be framed (a body sent without a length) broke the
  // connection while its response was under way: that response is out, now the connection goes.
  if (tracked[RESPONSES_IN_FLIGHT] === 0 && tracked[CLOSE_WHEN_DONE]) socket.end();
};

export interface ClientErrorAnswer {
  requestId: string;
  code: TAppErrorCode;
  status: number;
  /** node's name for what was wrong, e.g. HPE_INVALID_CONTENT_LENGTH. */
  reason: string;
}

const codeOf = (nodeCode: string | undefined): TAppErrorCode | undefined => {
  switch (nodeCode) {
    // The peer is gone: there is nobody to answer.
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return 'HEADERS_TOO_LARGE';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'PAYLOAD_TOO_LARGE';
    default:
      return 'BAD_REQUEST';
  }
};

const messageOf = (code: TAppErrorCode, nodeCode: string | undefined, reason: unknown): string => {
  if (code === 'HEADERS_TOO_LARGE') return 'Request headers too large';
  if (code === 'PAYLOAD_TOO_LARGE') return 'Chunk extensions too large';
  if (nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT') return 'Request not received in time';
  return typeof reason === 'string' && reason !== '' ? `Malformed HTTP request: ${excerpt(reason, 80)}` : 'Malformed HTTP request';
};

/**
 * The server's 'clientError' listener. Returns what it answered, or undefined when it could only
 * close the connection (the peer is gone, or a response is under way on it: then it closes once
 * that response is out).
 */
export const answerClientError = (error: Error & { code?: string; reason?: unknown }, socket: Duplex): ClientErrorAnswer | undefined => {
  const code = codeOf(error.code);
  if (code !== undefined && socket.writable && ((socket as TrackedSocket)[RESPONSES_IN_FLIGHT] ?? 0) > 0) {
    // A response is under way: let it finish, then close (see responseFinished).
    (socket as TrackedSocket)[CLOSE_WHEN_DONE] = true;
    return undefined;
  }
  if (code === undefined || !socket.writable) {
    socket.destroy();
    return undefined;
  }
  const requestId = randomUUID();
  const status = statusOf(code);
  const body = JSON.stringify(errorBody(code, messageOf(code, error.code, error.reason)));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
  ].join('\r\n');
  // What is left of the request cannot be framed: nothing more is read from this connection.
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
  return { requestId, code, status, reason: error.code ?? 'unknown' };
};
