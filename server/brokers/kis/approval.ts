// The WebSocket approval key of one KIS app key: asked for at POST /oauth2/Approval with the app
// key and secret, kept for the adapter's quote streams and asked for again only when the stream's
// server no longer knows it (OPSP0011) or it is near the day KIS gives it. KIS checks the key when
// a session registers and not after, so a running session outlives it; one issuance in flight is
// shared by every caller. The key is a credential: it never appears in a message.
import type { RequestLimiter } from '../alpaca/limiter.ts';
import { BrokerRejectedError, BrokerUnavailableError } from '../types.ts';
import { KIS_PATHS, type KisTokenError } from './wire.ts';
import type { KisApprovalAnswer, KisApprovalRequest } from './quote-wire.ts';

/** KIS gives an approval key a day; a new session after most of it asks for a fresh one. */
const APPROVAL_REUSE_MS = 20 * 3_600_000;

export interface KisApprovalOptions {
  origin: string;
  appKey: string;
  appSecret: string;
  timeoutMs: number;
  /** The key's and the host's limiters: the issuance is a REST call like the others. */
  limiters: readonly RequestLimiter[];
  /** Takes the secret out of a message. */
  scrub: (text: string) => string;
  now: () => number;
}

export interface KisApprovalKeys {
  /** A key to open a session with: the kept one, or a new one. */
  key(): Promise<string>;
  /** The stream's server refused this key: the next `key()` asks KIS for another. */
  refused(key: string): void;
  /** Takes the keys this manager handed out of a message, besides the secret. */
  scrub: (text: string) => string;
}

export const createKisApprovalKeys = (options: KisApprovalOptions): KisApprovalKeys => {
  let kept: { key: string; issuedAt: number } | undefined;
  let inFlight: Promise<string> | undefined;
  const handedOut: string[] = [];
  const scrub = (text: string) => handedOut.reduce((clean, key) => clean.split(key).join('[redacted]'), options.scrub(text));

  const issue = async (): Promise<string> => {
    const body: KisApprovalRequest = { grant_type: 'client_credentials', appkey: options.appKey, secretkey: options.appSecret };
    for (const limiter of options.limiters) await limiter.take();
    let response: Response;
    try {
      response = await fetch(new URL(KIS_PATHS.approval, options.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new BrokerUnavailableError(`KIS did not issue a WebSocket approval key within ${options.timeoutMs} ms`);
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new BrokerUnavailableError(scrub(`KIS could not be reached for a WebSocket approval key: ${reason}`));
    }
    const text = await response.text().catch(() => '');
    let answer: Partial<KisApprovalAnswer & KisTokenError & { msg_cd: string; msg1: string }> = {};
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      // A proxy's page: the status says enough.
    }
    if (response.ok && typeof answer.approval_key === 'string' && answer.approval_key) {
      handedOut.push(answer.approval_key);
      if (handedOut.length > 4) handedOut.shift();
      kept = { key: answer.approval_key, issuedAt: options.now() };
      return answer.approval_key;
    }
    // KIS's refusals of its OAuth endpoints carry error_code / error_description; its other answers msg_cd / msg1.
    const code = answer.error_code ?? answer.msg_cd;
    const detail = scrub(`${answer.error_description ?? answer.msg1 ?? `HTTP ${response.status}`}${code ? ` (${code})` : ''}`);
    if (response.status >= 500 && !code) throw new BrokerUnavailableError(`KIS failed to issue a WebSocket approval key: ${detail}`);
    throw new BrokerRejectedError(`KIS refused to issue a WebSocket approval key: ${detail}`);
  };

  return {
    key: () => {
      if (kept && options.now() - kept.issuedAt < APPROVAL_REUSE_MS) return Promise.resolve(kept.key);
      inFlight ??= issue().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    refused: (key) => {
      if (kept?.key === key) kept = undefined;
    },
    scrub,
  };
};
