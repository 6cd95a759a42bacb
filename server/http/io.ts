// node:http plumbing shared by every handler: request ids, client addresses, bounded body
// reads, JSON and error responses in the envelope of DESIGN §5.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { statusOf, type TAppErrorCode, type TErrorBody, type TFieldError } from '../../contracts/errors.ts';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestIdOf = (req: IncomingMessage): string => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
};

export const clientAddressOf = (req: IncomingMessage, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? 'unknown';
};

export class BodyTooLargeError extends Error {}

/** Reads the whole body, refusing (without buffering further) once it passes the limit. */
export const readBody = (req: IncomingMessage, limit: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });

/** Deeper JSON overflows the stack of whatever walks it recursively (re-serialising, coercing). */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in JSON text, strings skipped; one pass, no recursion. */
export const jsonDepth = (text: string): number => {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
};

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (status === 204 || body === undefined) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
};

export const errorBody = (code: TAppErrorCode, message: string, errors?: TFieldError[]): TErrorBody => ({
  code,
  message,
  status: statusOf(code),
  ...(errors ? { errors } : {}),
});

/** Writes an error envelope, adding the headers its status calls for. */
export const sendError = (res: ServerResponse, body: TErrorBody, retryAfterSec?: number): void => {
  const headers: Record<string, string> = {};
  if (body.status === 401) headers['WWW-Authenticate'] = 'Bearer';
  if (retryAfterSec !== undefined) headers['Retry-After'] = String(retryAfterSec);
  sendJson(res, body.status, body, headers);
};
