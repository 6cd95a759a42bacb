// One JSON POST to a destination the guard judged, connected to the address it judged (never a
// second lookup, which DNS rebinding could answer otherwise); TLS still checks the URL's host.
// No redirect is followed. Failures come back as short reasons that never quote the URL.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Destination } from './destinations.ts';

export interface PostAnswer {
  status: number;
  /** The answer's first bytes (a Telegram answer's `ok`); at most BODY_LIMIT. */
  body: string;
}

const BODY_LIMIT = 64 * 1024;

/** A lookup that answers the judged address whatever it is asked. */
const pinned = ({ address, family }: Destination['address']): LookupFunction =>
  ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;

const readLimited = (response: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (size < BODY_LIMIT) chunks.push(chunk);
      size += chunk.length;
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8').slice(0, BODY_LIMIT)));
    response.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

/** Posts `body` (JSON text); rejects with an Error whose message is a safe reason. */
export const postJson = (destination: Destination, body: string, headers: Record<string, string>, timeoutMs: number): Promise<PostAnswer> =>
  new Promise((resolve, reject) => {
    const { url, address } = destination;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'trading-service-notifications', ...headers },
        lookup: pinned(address),
        agent: false,
        timeout: timeoutMs,
      },
      (response) => {
        void readLimited(response).then((text) => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) => reject(new Error(error.message === 'timeout' ? 'timeout' : `network error${error.code ? ` (${error.code})` : ''}`)));
    request.end(body);
  });
