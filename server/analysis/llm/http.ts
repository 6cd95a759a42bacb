// What both LLM provider clients share: the request loop (one JSON POST, retried on the provider's
// trouble: 429, 5xx, a dropped connection; the whole of it bounded by one wall-clock budget) and
// the settling of an answer into an LlmAnswer.
import { retryDelayMs } from '../../alerts/backoff.ts';
import { systemClock, wakeAt, type Clock } from '../../clock.ts';
import { LlmError, type LlmAnswer, type LlmCall, type TModelPrices } from '../types.ts';
import { costOf } from './pricing.ts';

export interface PostJsonOptions {
  url: string;
  /** Sent as is; never copied into an error message (they carry the API key). */
  headers: Record<string, string>;
  /** Serialised with JSON.stringify. */
  body: unknown;
  /** The wall-clock cap of the call, retries and their waits included. */
  timeoutMs: number;
  /** What the cap is measured on (the service's clock; the system's by default), so a test moves past it rather than waiting. */
  clock?: Clock;
  /** Attempts after the first; 0 sends one request. */
  maxRetries: number;
  backoff: { baseMs: number; maxMs: number };
  signal?: AbortSignal;
  /** The jitter source, in [0, 1); passed in so a test can pin it. */
  random?: () => number;
  fetchImpl?: typeof fetch;
}

export interface PostJsonResult {
  /** The answer's parsed JSON, unchecked: each provider reads its own shape. */
  body: unknown;
  status: number;
  /** Requests sent, the first included. */
  attempts: number;
  /** From the first request sent to the answer read, retries included. */
  latencyMs: number;
}

/** The provider's trouble or its rate limit, not our request's; Anthropic's 529 "overloaded" is a 5xx. */
const retryableStatus = (status: number): boolean => status === 429 || status >= 500;

/**
 * The wait a server asks for: OpenAI's `retry-after-ms`, else `Retry-After` in seconds or as an
 * HTTP date. Undefined when it asks for nothing readable (the backoff schedule applies then).
 */
export const retryAfterMs = (headers: Headers, nowMs: number): number | undefined => {
  const milliseconds = headers.get('retry-after-ms')?.trim();
  if (milliseconds && /^\d+(\.\d+)?$/.test(milliseconds)) return Number(milliseconds);
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
};

/** Resolves after `ms`, or rejects with `stop()` as soon as `signal` aborts; no timer outlives it. */
const sleep = (ms: number, signal: AbortSignal, stop: () => Error): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(stop());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(stop());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** Where the request went, without a query string or credentials that a URL might carry. */
const targetOf = (url: string): string => {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return 'the LLM endpoint';
  }
};

const CREDENTIAL_HEADER = /auth|key|token|secret/i;

/**
 * Removes the credentials of the request's headers from a text a server or socket wrote, in case
 * it echoes one: each such value whole and each word of it (the key of `Bearer <key>`), longest first.
 */
const scrubberOf = (headers: Record<string, string>) => {
  const secrets = Object.entries(headers)
    .filter(([name]) => CREDENTIAL_HEADER.test(name))
    .flatMap(([, value]) => [value, ...value.split(/\s+/)])
    .filter((secret) => secret.length >= 8)
    .sort((a, b) => b.length - a.length);
  return (text: string): string => secrets.reduce((scrubbed, secret) => scrubbed.replaceAll(secret, '[redacted]'), text);
};

/** Both providers explain a refusal in `{ error: { message } }`; a short excerpt of it helps the report. */
const errorDetailOf = async (response: Response): Promise<string> => {
  try {
    const parsed = JSON.parse(await response.text()) as { error?: { message?: unknown } } | null;
    const message = parsed?.error?.message;
    return typeof message === 'string' ? message : '';
  } catch {
    return '';
  }
};

/** fetch's own message is a bare 'fetch failed'; the socket's reason is in the cause. */
const networkReasonOf = (error: unknown): string => {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
};

const parseJsonBody = (text: string, target: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    throw new LlmError('malformed', `${target} answered a body that is not JSON`);
  }
};

export const postJsonWithRetries = async (options: PostJsonOptions): Promise<PostJsonResult> => {
  const { url, headers, body, timeoutMs, maxRetries, backoff, signal, clock = systemClock(), random = Math.random, fetchImpl = fetch } = options;
  const target = targetOf(url);
  const scrub = scrubberOf(headers);
  const aborted = () => new LlmError('aborted', `the call to ${target} was aborted`);
  if (signal?.aborted) throw aborted();

  // One controller stops whatever is under way (a request, a body being read, a wait) for either
  // reason; `stopped` remembers which reason came first.
  const controller = new AbortController();
  let stopped: LlmError | undefined;
  const stop = (error: LlmError) => {
    stopped ??= error;
    controller.abort(stopped);
  };
  // The latency is measured; the deadline is decided on the clock.
  const startedAt = performance.now();
  const deadline = clock.now().getTime() + Math.max(0, timeoutMs);
  const timedOut = () => new LlmError('timeout', `the call to ${target} took longer than ${timeoutMs} ms`);
  const cancelDeadline = wakeAt(clock, new Date(deadline), () => stop(timedOut()));
  const onAbort = () => stop(aborted());
  signal?.addEventListener('abort', onAbort, { once: true });
  const stoppedError = (): LlmError => stopped ?? aborted();
  const payload = JSON.stringify(body);

  try {
    for (let attempts = 1; ; attempts += 1) {
      let failure: LlmError;
      let waitMs: number | undefined;
      try {
        const response = await fetchImpl(url, {
          method: 'POST',
          headers,
          body: payload,
          // A redirect would resend the key to wherever it points (fetch drops only `Authorization`).
          redirect: 'manual',
          signal: controller.signal,
        });
        if (response.status >= 200 && response.status < 300) {
          const parsed = parseJsonBody(await response.text(), target);
          return { body: parsed, status: response.status, attempts, latencyMs: Math.round(performance.now() - startedAt) };
        }
        if (!retryableStatus(response.status)) {
          // Scrubbed before it is cut, so a cut cannot leave half a key that no longer matches.
          const detail = scrub(await errorDetailOf(response)).slice(0, 300);
          throw new LlmError('http', `${target} answered HTTP ${response.status}${detail ? `: ${detail}` : ''}`, { status: response.status });
        }
        waitMs = retryAfterMs(response.headers, clock.now().getTime());
        // The answer's content is not used; cancelling frees the connection for the retry.
        await response.body?.cancel().catch(() => undefined);
        failure = new LlmError('http', `${target} answered HTTP ${response.status} after ${attempts} attempt(s)`, { status: response.status });
      } catch (error) {
        if (controller.signal.aborted) throw stoppedError();
        if (error instanceof LlmError) throw error;
        failure = new LlmError('network', `${target} could not be reached after ${attempts} attempt(s): ${scrub(networkReasonOf(error))}`);
      }
      if (attempts > maxRetries) throw failure;
      const wantedMs = waitMs ?? retryDelayMs(attempts, backoff, random());
      const remainingMs = Math.max(0, deadline - clock.now().getTime());
      await sleep(Math.min(wantedMs, remainingMs), controller.signal, stoppedError);
      // A wait that fills the budget leaves no time for another attempt; deciding here, rather
      // than racing the deadline's timer, keeps a doomed request from being sent.
      if (wantedMs >= remainingMs) {
        stop(timedOut());
        throw stoppedError();
      }
    }
  } finally {
    cancelDeadline();
    signal?.removeEventListener('abort', onAbort);
  }
};

/** What both provider clients are built from (the settings of the analysis area). */
export interface ProviderClientOptions {
  baseUrl: string;
  apiKey: string;
  /** The model asked for; the answer names the exact id that answered, which is what gets priced. */
  model: string;
  prices: TModelPrices;
  /** A ceiling on every call's own `timeoutMs`: the lower of the two bounds the call. */
  timeoutMs: number;
  /** The clock the calls' deadlines are on (the system's by default). */
  clock?: Clock;
  maxRetries: number;
  backoff: { baseMs: number; maxMs: number };
  random?: () => number;
  fetchImpl?: typeof fetch;
}

/** `base` without trailing slashes, then `path`, so a configured `…/v1/` works as well as `…/v1`. */
export const joinUrl = (base: string, path: string): string => `${base.replace(/\/+$/, '')}${path}`;

/** The request-loop options of one call of a provider client. */
export const loopOptionsOf = (options: ProviderClientOptions, call: LlmCall) => ({
  timeoutMs: Math.min(options.timeoutMs, call.timeoutMs),
  maxRetries: options.maxRetries,
  backoff: options.backoff,
  ...(call.signal ? { signal: call.signal } : {}),
  ...(options.clock ? { clock: options.clock } : {}),
  ...(options.random ? { random: options.random } : {}),
  ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
});

/** A JSON object's fields, or undefined for anything else: the providers' answers are read defensively. */
export const fieldsOf = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** A token count as the wire carries it, or undefined when it is not one. */
export const tokenCountOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** What a provider's answer gave, each part undefined when the body lacked it. */
export interface WireAnswer {
  text: string | undefined;
  tokensInput: number | undefined;
  tokensOutput: number | undefined;
  model: string | undefined;
}

/**
 * Turns a provider's answer into an LlmAnswer, or a 'malformed' LlmError naming what was missing;
 * tokens the answer did report are still counted and priced, since the provider bills them.
 */
export const settleAnswer = (
  { provider, requestedModel, prices }: { provider: string; requestedModel: string; prices: TModelPrices },
  wire: WireAnswer,
  result: PostJsonResult,
): LlmAnswer => {
  const tokensInput = wire.tokensInput ?? 0;
  const tokensOutput = wire.tokensOutput ?? 0;
  const costUsd = costOf(prices, wire.model ?? requestedModel, { tokensInput, tokensOutput });
  const missing = Object.entries(wire)
    .filter(([, value]) => value === undefined)
    .map(([part]) => part);
  if (wire.text === undefined || wire.tokensInput === undefined || wire.tokensOutput === undefined || wire.model === undefined) {
    throw new LlmError('malformed', `the ${provider} answer lacks ${missing.join(', ')}`, { tokensInput, tokensOutput, costUsd });
  }
  return { text: wire.text, tokensInput, tokensOutput, latencyMs: result.latencyMs, model: wire.model, costUsd, attempts: result.attempts };
};
