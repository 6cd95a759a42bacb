// The access token of one KIS app key: issued with the key and secret at /oauth2/tokenP, cached
// until shortly before it expires, renewed by one caller while the others wait for the same
// issuance (single flight), and kept in a store so that every adapter of the key, and later every
// instance of the service, uses the one token. KIS allows about one issuance per minute per key
// and sends a notice to the account holder on each: issuing per call or per adapter is not an
// option.
//
// The split: the single flight is per process (a map of issuances in flight, keyed like the
// store); sharing across processes is the store's (the default keeps tokens in this process; the
// service passes one backed by Postgres). Two instances that both find the store empty may both
// ask KIS; the second is refused for a minute (EGW00133) and then reads the first one's token
// from the store.
import { BrokerRejectedError, BrokerUnavailableError } from '../types.ts';
import { KIS_MSG, KIS_PATHS, type KisTokenAnswer, type KisTokenError } from './wire.ts';

/** A token as the store keeps it. `expiresAt` is an instant in ms. */
export interface KisStoredToken {
  accessToken: string;
  expiresAt: number;
  issuedAt: number;
}

/**
 * Where tokens live, by key (`mode:origin:appKey`, see `tokenStoreKey`). The service's store
 * keeps them in Postgres (encrypted like the broker keys); `createMemoryTokenStore` is this
 * process's.
 */
export interface KisTokenStore {
  get(key: string): Promise<KisStoredToken | undefined>;
  put(key: string, token: KisStoredToken): Promise<void>;
  /** Forget the token if it is still this one (KIS refused it); a newer one stays. */
  drop(key: string, accessToken: string): Promise<void>;
}

export const createMemoryTokenStore = (): KisTokenStore => {
  const tokens = new Map<string, KisStoredToken>();
  return {
    get: (key) => Promise.resolve(tokens.get(key)),
    put: (key, token) => {
      tokens.set(key, token);
      return Promise.resolve();
    },
    drop: (key, accessToken) => {
      if (tokens.get(key)?.accessToken === accessToken) tokens.delete(key);
      return Promise.resolve();
    },
  };
};

/** The process's store, for adapters built without one. */
export const sharedTokenStore: KisTokenStore = createMemoryTokenStore();

/** The app key identifies the token: a paper and a live key never share one, nor two origins. */
export const tokenStoreKey = (origin: string, appKey: string) => `${origin}|${appKey}`;

export interface KisTokenManagerOptions {
  origin: string;
  appKey: string;
  appSecret: string;
  store: KisTokenStore;
  /** Renew this long before the expiry (default 10 minutes), or at 90 % of a shorter lifetime. */
  renewBeforeMs: number;
  timeoutMs: number;
  /** Issuances in flight in this process, shared by every manager of the process. */
  inFlight?: Map<string, Promise<KisStoredToken>>;
  now?: () => number;
  /** A scrubber for messages (the secret, the token). */
  scrub: (text: string) => string;
}

const processInFlight = new Map<string, Promise<KisStoredToken>>();

/** KIS's issuance spacing: an early renewal that failed is not tried again sooner. */
const EARLY_RENEWAL_RETRY_MS = 60_000;

/** Whether a token is still good to send now, and whether it is time to renew it. */
export const tokenFreshness = (token: KisStoredToken | undefined, nowMs: number, renewBeforeMs: number): 'missing' | 'expired' | 'renew' | 'fresh' => {
  if (!token) return 'missing';
  if (nowMs >= token.expiresAt) return 'expired';
  const lifetime = token.expiresAt - token.issuedAt;
  const margin = Math.min(renewBeforeMs, Math.floor(lifetime / 10));
  return nowMs >= token.expiresAt - margin ? 'renew' : 'fresh';
};

/** KIS's expiry text, `YYYY-MM-DD HH:MM:SS` Korea time, as ms; NaN when it is not that. */
export const parseKisExpiry = (text: string): number => {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(text.trim());
  return match ? Date.parse(`${match[1]}T${match[2]}+09:00`) : Number.NaN;
};

export const createKisTokenManager = (options: KisTokenManagerOptions) => {
  const now = options.now ?? Date.now;
  const key = tokenStoreKey(options.origin, options.appKey);
  const inFlight = options.inFlight ?? processInFlight;
  let issued = 0;
  /** When an early renewal last failed: the old token serves a minute before the next try, so a refusing KIS is not asked on every call. */
  let earlyRenewalFailedAt = Number.NEGATIVE_INFINITY;

  const issue = async (): Promise<KisStoredToken> => {
    const url = new URL(KIS_PATHS.token, options.origin);
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', appkey: options.appKey, appsecret: options.appSecret }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new BrokerUnavailableError(`KIS did not issue a token within ${options.timeoutMs} ms`);
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new BrokerUnavailableError(options.scrub(`KIS could not be reached for a token: ${reason}`));
    }
    const text = await response.text().catch(() => '');
    let body: Partial<KisTokenAnswer & KisTokenError> = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // A proxy's page: the status says enough.
    }
    if (response.ok && typeof body.access_token === 'string' && body.access_token) {
      const issuedAt = now();
      const byLifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? issuedAt + body.expires_in * 1_000 : Number.NaN;
      const byText = parseKisExpiry(body.access_token_token_expired ?? '');
      // The earlier of the two: a clock that runs ahead of KIS's must not outlive the token.
      const expiresAt = Math.min(...[byLifetime, byText].filter((value) => Number.isFinite(value)));
      if (!Number.isFinite(expiresAt)) throw new BrokerUnavailableError('KIS issued a token without an expiry');
      issued += 1;
      return { accessToken: body.access_token, expiresAt, issuedAt };
    }
    const message = options.scrub(`${body.error_description ?? `HTTP ${response.status}`}${body.error_code ? ` (${body.error_code})` : ''}`);
    if (body.error_code === KIS_MSG.tokenTooSoon) throw new KisTokenTooSoonError(`KIS refused to issue another token yet: ${message}`);
    // A wrong key or secret is the caller's to fix: a refusal. A 5xx is KIS's.
    if (response.status >= 500 && !body.error_code) throw new BrokerUnavailableError(`KIS failed to issue a token: ${message}`);
    throw new BrokerRejectedError(`KIS refused to issue a token: ${message}`);
  };

  /**
   * A fresh token: the store's when it has one, else one issued now. A renewal that fails for a
   * while (refused as too soon, or KIS unreachable) falls back on the token still held, since
   * renewal is early and it is still good; with none good, the call is unavailable (a token that
   * cannot be renewed). A refused key or secret is a refusal, whatever is held.
   */
  const renew = async (): Promise<KisStoredToken> => {
    const stored = await options.store.get(key);
    if (tokenFreshness(stored, now(), options.renewBeforeMs) === 'fresh') return stored!;
    try {
      const token = await issue();
      await options.store.put(key, token);
      return token;
    } catch (error) {
      if (!(error instanceof BrokerUnavailableError)) throw error;
      // Another instance may have issued meanwhile; else the old token while it lasts.
      const again = await options.store.get(key);
      const state = tokenFreshness(again, now(), options.renewBeforeMs);
      if (state === 'fresh') return again!;
      if (state === 'renew') {
        earlyRenewalFailedAt = now();
        return again!;
      }
      throw new BrokerUnavailableError(`the KIS token expired and cannot be renewed yet: ${error.message}`);
    }
  };

  const renewOnce = (): Promise<KisStoredToken> => {
    let pending = inFlight.get(key);
    if (!pending) {
      pending = renew().finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };

  return {
    /** The token to send now. */
    token: async (): Promise<string> => {
      const stored = await options.store.get(key);
      const state = tokenFreshness(stored, now(), options.renewBeforeMs);
      if (state === 'fresh' || (state === 'renew' && now() - earlyRenewalFailedAt < EARLY_RENEWAL_RETRY_MS)) return stored!.accessToken;
      return (await renewOnce()).accessToken;
    },
    /**
     * KIS refused this token (expired or revoked before its time): forget it and get another.
     * Callers that were refused the same token share one renewal.
     */
    refused: async (accessToken: string): Promise<string> => {
      await options.store.drop(key, accessToken);
      const stored = await options.store.get(key);
      if (stored && stored.accessToken !== accessToken && tokenFreshness(stored, now(), options.renewBeforeMs) !== 'expired') return stored.accessToken;
      return (await renewOnce()).accessToken;
    },
    /** Tokens this manager issued (tests count them). */
    get issued() {
      return issued;
    },
  };
};

export type KisTokenManager = ReturnType<typeof createKisTokenManager>;

/** KIS answered EGW00133: a token was issued for this key less than a minute ago. */
export class KisTokenTooSoonError extends BrokerUnavailableError {}
