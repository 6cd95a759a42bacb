// The REST client of one Alpaca key: signs each request with the key headers, draws from the
// key's limiter, times out, honours 429 Retry-After a bounded number of times, and turns every
// failure into the broker errors (a refusal or unavailable) with the secret kept out of them.
import { BrokerRejectedError, BrokerUnavailableError, wasRefusedConnection } from '../types.ts';
import type { RequestLimiter } from './limiter.ts';
import type { AlpacaErrorBody } from './wire.ts';

export interface AlpacaHttpOptions {
  keyId: string;
  secretKey: string;
  limiter: RequestLimiter;
  /** Per call, limiter wait excluded. */
  timeoutMs: number;
  /** How many times a 429 is retried before the call counts as unavailable. */
  maxRateLimitRetries: number;
  /** The longest Retry-After honoured; a longer one fails at once (waiting would outlast the caller). */
  maxRetryAfterSeconds: number;
}

/** A refusal with Alpaca's status and code kept, so callers can tell "not found" from the rest. */
export class AlpacaRefusedError extends BrokerRejectedError {
  readonly status: number;
  readonly alpacaCode: number | null;
  constructor(message: string, status: number, alpacaCode: number | null) {
    super(message);
    this.status = status;
    this.alpacaCode = alpacaCode;
  }
}

export interface AlpacaRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The origin (trading or data host) and the path with its query. */
  url: URL;
  body?: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Alpaca's own `message` when the body is its error shape, else the status line. */
const messageOf = (status: number, text: string): { message: string; code: number | null } => {
  try {
    const body = JSON.parse(text) as Partial<AlpacaErrorBody>;
    if (typeof body.message === 'string') return { message: body.message, code: typeof body.code === 'number' ? body.code : null };
  } catch {
    // Not JSON (a proxy's page, say): the status says enough.
  }
  return { message: `HTTP ${status}`, code: null };
};

export const createAlpacaHttp = (options: AlpacaHttpOptions) => {
  const { keyId, secretKey, limiter, timeoutMs } = options;
  /** A second line of defence: whatever a server echoes, the secret never leaves in a message. */
  const scrub = (text: string) => (secretKey ? text.split(secretKey).join('[redacted]') : text);

  const attempt = async ({ method, url, body }: AlpacaRequest): Promise<Response> => {
    await limiter.take();
    try {
      return await fetch(url, {
        method,
        headers: {
          'APCA-API-KEY-ID': keyId,
          'APCA-API-SECRET-KEY': secretKey,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const what = `${method} ${url.pathname}`;
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new BrokerUnavailableError(`Alpaca did not answer ${what} within ${timeoutMs} ms`);
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new BrokerUnavailableError(scrub(`Alpaca could not be reached for ${what}: ${reason}`), { notTaken: wasRefusedConnection(error) });
    }
  };

  /** The parsed JSON answer, or undefined for an empty one (204 of a cancel). */
  const request = async <T>(call: AlpacaRequest): Promise<T> => {
    const what = `${call.method} ${call.url.pathname}`;
    for (let retries = 0; ; retries += 1) {
      const response = await attempt(call);
      let text: string;
      try {
        text = await response.text();
      } catch {
        throw new BrokerUnavailableError(`Alpaca's answer to ${what} broke off`);
      }
      if (response.ok) {
        try {
          return (text ? JSON.parse(text) : undefined) as T;
        } catch {
          throw new BrokerUnavailableError(`Alpaca answered ${what} with something that is not JSON`);
        }
      }
      const { message, code } = messageOf(response.status, text);
      if (response.status === 429) {
        const retryAfter = Number(response.headers.get('retry-after') ?? '1');
        const waitSeconds = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1;
        // Every caller of the key, on every instance, holds off as long (the budget is shared).
        limiter.pause(waitSeconds * 1_000);
        if (retries >= options.maxRateLimitRetries || waitSeconds > options.maxRetryAfterSeconds) {
          throw new BrokerUnavailableError(scrub(`Alpaca kept rate-limiting ${what} (429: ${message})`), { notTaken: true });
        }
        await sleep(waitSeconds * 1_000);
        continue;
      }
      if (response.status >= 400 && response.status < 500) throw new AlpacaRefusedError(scrub(`Alpaca refused ${what} (${response.status}): ${message}`), response.status, code);
      throw new BrokerUnavailableError(scrub(`Alpaca failed ${what} (${response.status}): ${message}`));
    }
  };

  return { request };
};

export type AlpacaHttp = ReturnType<typeof createAlpacaHttp>;
