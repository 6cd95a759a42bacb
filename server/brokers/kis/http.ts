// The REST client of one KIS app key and account: sends each call with its headers (the bearer
// token, appkey, appsecret, the tr_id of the call on this domain, custtype P), draws from the
// key's and the host's limiters, times out, backs off on "too many requests" (EGW00201, which KIS
// answers with HTTP 500, or a 429) a bounded number of times, renews a token KIS refuses once and
// tries again, and turns every other failure into a refusal (KIS's msg1) or unavailable, with the
// secret and the tokens kept out of every message.
import { retryDelayMs } from '../../alerts/backoff.ts';
import type { RequestLimiter } from '../alpaca/limiter.ts';
import { BrokerRejectedError, BrokerUnavailableError, wasRefusedConnection, type TTradingMode } from '../types.ts';
import { classifyKisFailure } from './mapping.ts';
import type { KisTokenManager } from './token.ts';
import { KIS_TR_IDS, type KisEnvelope, type TKisCall } from './wire.ts';

/** A refusal with KIS's msg_cd kept, so callers can tell one refusal from another. */
export class KisRefusedError extends BrokerRejectedError {
  readonly status: number;
  readonly msgCd: string;
  constructor(message: string, status: number, msgCd: string) {
    super(message);
    this.status = status;
    this.msgCd = msgCd;
  }
}

export interface KisHttpOptions {
  origin: string;
  mode: TTradingMode;
  appKey: string;
  appSecret: string;
  tokens: KisTokenManager;
  /** The key's limiter and the host's: a call takes from both. */
  keyLimiter: RequestLimiter;
  hostLimiter: RequestLimiter;
  /** Per call, limiter waits excluded. */
  timeoutMs: number;
  /** "Too many requests" answers retried before the call is unavailable. */
  maxRateLimitRetries: number;
  /** The backoff after a "too many requests": doubling from baseMs to maxMs, jittered. */
  rateLimitBackoff: { baseMs: number; maxMs: number };
  /** The longest Retry-After honoured (a 429 that sends one). */
  maxRetryAfterSeconds: number;
  random?: () => number;
}

export interface KisRequest {
  call: TKisCall;
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** '' for a first page, 'N' for the next one. */
  trCont?: '' | 'N';
}

export interface KisReply<T> {
  body: T;
  /** The answer's tr_cont header: M or F when there are more pages. */
  trCont: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const envelopeOf = (text: string): Partial<KisEnvelope> | undefined => {
  try {
    const body = JSON.parse(text) as Partial<KisEnvelope>;
    return body && typeof body === 'object' ? body : undefined;
  } catch {
    return undefined;
  }
};

export const createKisHttp = (options: KisHttpOptions) => {
  const random = options.random ?? Math.random;
  /** Tokens sent lately: scrubbed like the secret from anything a server echoes. */
  const recentTokens: string[] = [];
  const scrub = (text: string) => {
    let clean = options.appSecret ? text.split(options.appSecret).join('[redacted]') : text;
    for (const token of recentTokens) clean = clean.split(token).join('[redacted]');
    return clean.replace(/Bearer\s+[\w.-]+/g, 'Bearer [redacted]');
  };
  const remember = (token: string) => {
    if (!recentTokens.includes(token)) recentTokens.push(token);
    if (recentTokens.length > 4) recentTokens.shift();
  };

  const send = async (request: KisRequest, token: string): Promise<{ status: number; text: string; trCont: string; retryAfter: string | null }> => {
    const url = new URL(request.path, options.origin);
    for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
    const what = `${request.method} ${url.pathname}`;
    await options.keyLimiter.take();
    await options.hostLimiter.take();
    try {
      const response = await fetch(url, {
        method: request.method,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          accept: 'application/json',
          authorization: `Bearer ${token}`,
          appkey: options.appKey,
          appsecret: options.appSecret,
          tr_id: KIS_TR_IDS[request.call][options.mode],
          tr_cont: request.trCont ?? '',
          custtype: 'P',
        },
        body: request.body === undefined ? null : JSON.stringify(request.body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const text = await response.text();
      return { status: response.status, text, trCont: response.headers.get('tr_cont') ?? '', retryAfter: response.headers.get('retry-after') };
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new BrokerUnavailableError(`KIS did not answer ${what} within ${options.timeoutMs} ms`);
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new BrokerUnavailableError(scrub(`KIS could not be reached for ${what}: ${reason}`), { notTaken: wasRefusedConnection(error) });
    }
  };

  /** The parsed answer of a successful call (rt_cd '0'); every failure throws a broker error. */
  const request = async <T extends KisEnvelope>(call: KisRequest): Promise<KisReply<T>> => {
    const what = `${call.method} ${call.path}`;
    let token = await options.tokens.token();
    remember(token);
    let tokenRenewed = false;
    for (let rateLimited = 0; ; ) {
      const answer = await send(call, token);
      const envelope = envelopeOf(answer.text);
      const hasKisMessage = typeof envelope?.rt_cd === 'string' && typeof envelope.msg1 === 'string';
      if (answer.status >= 200 && answer.status < 300 && envelope?.rt_cd === '0') return { body: envelope as T, trCont: answer.trCont };
      if (answer.status >= 200 && answer.status < 300 && !hasKisMessage) throw new BrokerUnavailableError(`KIS answered ${what} with something that is not its JSON`);
      const msgCd = envelope?.msg_cd ?? '';
      const detail = scrub(hasKisMessage ? `${envelope.msg1!.trim()} (${msgCd})` : `HTTP ${answer.status}`);
      switch (classifyKisFailure(answer.status, msgCd, hasKisMessage)) {
        case 'rate_limited': {
          rateLimited += 1;
          const retryAfter = Number(answer.retryAfter ?? Number.NaN);
          const waitMs = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1_000 : retryDelayMs(rateLimited, options.rateLimitBackoff, random());
          // The key's budget, on every instance, holds off as long (the host's serves other keys too).
          options.keyLimiter.pause(waitMs);
          if (rateLimited > options.maxRateLimitRetries || waitMs > options.maxRetryAfterSeconds * 1_000) throw new BrokerUnavailableError(`KIS kept rate-limiting ${what}: ${detail}`, { notTaken: true });
          await sleep(waitMs);
          continue;
        }
        case 'token_rejected':
          // Renewed once per call: a fresh token refused too is not going to get better by retrying.
          if (tokenRenewed) throw new BrokerUnavailableError(`KIS refused a renewed token for ${what}: ${detail}`, { notTaken: true });
          tokenRenewed = true;
          token = await options.tokens.refused(token);
          remember(token);
          continue;
        case 'refused':
          throw new KisRefusedError(`KIS refused ${what}: ${detail}`, answer.status, msgCd);
        case 'unavailable':
          throw new BrokerUnavailableError(`KIS failed ${what} (${answer.status}): ${detail}`);
      }
    }
  };

  return { request, scrub };
};

export type KisHttp = ReturnType<typeof createKisHttp>;
