// node:http plumbing shared by every handler: request ids, declared media types, bounded body
// reads, JSON and error responses in the envelope of DESIGN §5.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { statusOf, type TAppErrorCode, type TErrorBody, type TFieldError } from '../../contracts/errors.ts';
import { excerpt } from '../trpc/errors.ts';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestIdOf = (req: IncomingMessage): string => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
};

const JSON_MEDIA_TYPE = 'application/json';

/**
 * The media type a request declares for its body, lower-case and without parameters; a body
 * without Content-Type (or with an empty one) is read as JSON.
 */
export const mediaTypeOf = (req: IncomingMessage): string => {
  const declared = req.headers['content-type'];
  if (declared === undefined || declared === JSON_MEDIA_TYPE) return JSON_MEDIA_TYPE;
  const semicolon = declared.indexOf(';');
  const essence = (semicolon === -1 ? declared : declared.slice(0, semicolon)).trim().toLowerCase();
  return essence === '' ? JSON_MEDIA_TYPE : essence;
};

/** `application/json` and its structured-syntax relatives (`application/problem+json`). */
export const isJsonMediaType = (mediaType: string): boolean =>
  mediaType === JSON_MEDIA_TYPE || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));

/**
 * Why a request body cannot be read as it is declared, or undefined when it can: JSON, or a
 * type the route lists in `accepts`, with no Content-Encoding other than identity (we inflate
 * nothing, so a compressed body would only ever be a confusing JSON error).
 */
export const unreadableBody = (req: IncomingMessage, mediaType: string, accepts: readonly string[] | undefined): string | undefined => {
  if (!isJsonMediaType(mediaType) && !accepts?.some((type) => type.toLowerCase() === mediaType)) {
    const accepted = [JSON_MEDIA_TYPE, ...(accepts ?? []).filter((type) => type !== JSON_MEDIA_TYPE)];
    return `Content-Type ${excerpt(mediaType)} is not accepted here; send ${accepted.join(' or ')}`;
  }
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return `Content-Encoding ${excerpt(encoding)} is not accepted; send the body uncompressed`;
  return undefined;
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
