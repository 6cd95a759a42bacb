// The access token of one KIS app key: issued with the key and secret at /oauth2/tokenP, kept
// until shortly before it expires, renewed by one caller while the others keep using the old one,
// and kept in a store so that every adapter of the key, and every instance of the service, uses
// the one token. KIS allows about one issuance per minute per key and sends a notice to the
// account holder on each: issuing per call, per adapter or per instance is not an option.
//
// Two levels keep issuances single. In this process, the issuances in flight are one map, keyed
// like the store, so concurrent callers share one. Across processes, the store hands out a short
// right to issue (`claimIssue`): only its holder calls KIS; the others use the token they have,
// or, with none good, wait for the holder's to appear in the store. The right is a lease with an
// expiry rather than a lock held in a transaction: the issuance is an HTTP call of up to the
// timeout, and a transaction held open across it would pin a connection (on PGlite, the only
// one) and end with the process anyway; a lease whose holder died simply runs out.
import { createHash, randomUUID } from 'node:crypto';
import { BrokerRejectedError, BrokerUnavailableError, type TTradingMode } from '../types.ts';
import { KIS_MSG, KIS_PATHS, type KisTokenAnswer, type KisTokenError } from './wire.ts';

/** A token as the store keeps it. `expiresAt` is an instant in ms. */
export interface KisStoredToken {
  accessToken: string;
  expiresAt: number;
  issuedAt: number;
}

/**
 * Where tokens live, by key (see `tokenStoreKey`: a hash, never the app key itself). The service's
 * store keeps them in Postgres, encrypted (server/brokers/real/kis-tokens.ts);
 * `createMemoryTokenStore` is this process's.
 */
export interface KisTokenStore {
  get(key: string): Promise<KisStoredToken | undefined>;
  put(key: string, token: KisStoredToken): Promise<void>;
  /** Forget the token if it is still this one (KIS refused it); a newer one stays. */
  drop(key: string, accessToken: string): Promise<void>;
  /**
   * Takes the right to ask KIS for the key's token until `nowMs + ttlMs`, or extends it for the
   * holder that has it; false while another holder has it and it has not run out.
   */
  claimIssue(key: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean>;
  /** Gives the right up (if `holder` still has it), so the next renewal need not wait for it to run out. */
  releaseIssue(key: string, holder: string): Promise<void>;
}

export const createMemoryTokenStore = (): KisTokenStore => {
  const tokens = new Map<string, KisStoredToken>();
  const claims = new Map<string, { holder: string; until: number }>();
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
    claimIssue: (key, holder, nowMs, ttlMs) => {
      const claim = claims.get(key);
      if (claim && claim.holder !== holder && claim.until > nowMs) return Promise.resolve(false);
      claims.set(key, { holder, until: nowMs + ttlMs });
      return Promise.resolve(true);
    },
    releaseIssue: (key, holder) => {
      if (claims.get(key)?.holder === holder) claims.delete(key);
      return Promise.resolve();
    },
  };
};

/** The process's store, for adapters built without one. */
export const sharedTokenStore: KisTokenStore = createMemoryTokenStore();

/**
 * The store's key of an app key's token: a paper and a live key never share one, nor two origins.
 * A hash, so that the app key is not kept beside the token (app keys are long random strings: the
 * hash cannot be reversed by guessing).
 */
export const tokenStoreKey = (mode: TTradingMode, origin: string, appKey: string) => createHash('sha256').update(`kis|${mode}|${origin}|${appKey}`, 'utf8').digest('hex');

export interface KisTokenManagerOptions {
  origin: string;
  mode: TTradingMode;
  appKey: string;
  appSecret: string;
  store: KisTokenStore;
  /** Renew this long before the expiry (default 10 minutes), or at 90 % of a shorter lifetime. */
  renewBeforeMs: number;
  timeoutMs: number;
  /**
   * Issuances in flight in this process, shared by every manager of the process (the default).
   * A test that plays two instances in one process gives each its own.
   */
  inFlight?: Map<string, Promise<KisStoredToken>>;
  now?: () => number;
  /** A scrubber for messages (the secret, the token). */
  scrub: (text: string) => string;
}

const processInFlight = new Map<string, Promise<KisStoredToken>>();

/**
 * The store's failures (a database that cannot be reached) as KIS being unavailable to us, with
 * none of their text: a failed query's message may carry its parameters.
 */
const guarded = (store: KisTokenStore): KisTokenStore => {
  const fail = (what: string) => (): never => {
    throw new BrokerUnavailableError(`the KIS token store could not ${what}`, { notTaken: true });
  };
  return {
    get: (key) => store.get(key).catch(fail('be read')),
    put: (key, token) => store.put(key, token).catch(fail('save the token')),
    drop: (key, accessToken) => store.drop(key, accessToken).catch(fail('drop the token')),
    claimIssue: (key, holder, nowMs, ttlMs) => store.claimIssue(key, holder, nowMs, ttlMs).catch(fail('hand out the right to issue')),
    releaseIssue: (key, holder) => store.releaseIssue(key, holder).catch(fail('take back the right to issue')),
  };
};

/** KIS's issuance spacing: an early renewal that failed is not tried again sooner, by any instance. */
const EARLY_RENEWAL_RETRY_MS = 60_000;
/** While another instance holds the right to issue, this one does not ask for it again sooner. */
const CLAIM_RETRY_MS = 2_000;
/** How often a caller with no good token looks for the one another instance is issuing. */
const WAIT_POLL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const key = tokenStoreKey(options.mode, options.origin, options.appKey);
  const inFlight = options.inFlight ?? processInFlight;
  const store = guarded(options.store);
  /** This manager's name as a holder of the right to issue. */
  const holder = randomUUID();
  /** The right is held for the issuance's timeout and the write after it. */
  const claimMs = options.timeoutMs + 5_000;
  let issued = 0;
  /** The token last read or issued: used while fresh without asking the store (a query per KIS call otherwise). */
  let held: KisStoredToken | undefined;
  /** No renewal is tried before this (an early one KIS refused, or another instance renewing): the old token serves meanwhile. */
  let renewNotBefore = Number.NEGATIVE_INFINITY;

  const good = (token: KisStoredToken | undefined): token is KisStoredToken => {
    const state = tokenFreshness(token, now(), options.renewBeforeMs);
    return state === 'fresh' || state === 'renew';
  };
  const read = async () => (held = await store.get(key));

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
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new BrokerUnavailableError(`KIS did not issue a token within ${options.timeoutMs} ms`, { notTaken: true });
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new BrokerUnavailableError(options.scrub(`KIS could not be reached for a token: ${reason}`), { notTaken: true });
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
      if (!Number.isFinite(expiresAt)) throw new BrokerUnavailableError('KIS issued a token without an expiry', { notTaken: true });
      issued += 1;
      return { accessToken: body.access_token, expiresAt, issuedAt };
    }
    const message = options.scrub(`${body.error_description ?? `HTTP ${response.status}`}${body.error_code ? ` (${body.error_code})` : ''}`);
    if (body.error_code === KIS_MSG.tokenTooSoon) throw new KisTokenTooSoonError(`KIS refused to issue another token yet: ${message}`);
    // A wrong key or secret is the caller's to fix: a refusal. A 5xx is KIS's.
    if (response.status >= 500 && !body.error_code) throw new BrokerUnavailableError(`KIS failed to issue a token: ${message}`, { notTaken: true });
    throw new BrokerRejectedError(`KIS refused to issue a token: ${message}`);
  };

  /**
   * Waits (in real time: the injected clock may stand still) for the token another instance is
   * issuing, up to the time its right to issue lasts.
   */
  const awaitOthers = async (): Promise<KisStoredToken> => {
    const deadline = performance.now() + claimMs;
    while (performance.now() < deadline) {
      await sleep(WAIT_POLL_MS);
      const stored = await read();
      if (good(stored)) return stored;
    }
    throw new BrokerUnavailableError('the KIS token is being issued by another instance and did not arrive in time', { notTaken: true });
  };

  /** Issues a token holding the right to, and saves it; a failure falls back as `renew` says. */
  const issueAndSave = async (): Promise<KisStoredToken> => {
    let keepClaim = false;
    try {
      // Another instance may have saved one between our read and our claim.
      const stored = await read();
      if (tokenFreshness(stored, now(), options.renewBeforeMs) === 'fresh') return stored!;
      const token = await issue();
      held = token;
      // Saved for the other instances; a token that could not be saved still serves this one.
      await store.put(key, token).catch(() => undefined);
      return token;
    } catch (error) {
      if (!(error instanceof BrokerUnavailableError)) throw error;
      // KIS will not issue for a minute: the right is kept that long, so no instance asks sooner.
      if (error instanceof KisTokenTooSoonError) keepClaim = await store.claimIssue(key, holder, now(), EARLY_RENEWAL_RETRY_MS).catch(() => false);
      // Another instance may have issued meanwhile; else the old token while it lasts.
      const again = await read();
      const state = tokenFreshness(again, now(), options.renewBeforeMs);
      if (state === 'fresh') return again!;
      if (state === 'renew') {
        renewNotBefore = now() + EARLY_RENEWAL_RETRY_MS;
        return again!;
      }
      throw new BrokerUnavailableError(`the KIS token expired and cannot be renewed yet: ${error.message}`, { notTaken: true });
    } finally {
      if (!keepClaim) await store.releaseIssue(key, holder).catch(() => undefined);
    }
  };

  /**
   * A good token: the store's when it is fresh, else one issued now by whichever instance holds
   * the right to issue. One that does not keeps using the old token while it is still good (the
   * renewal is early) and waits for the new one otherwise. A renewal that fails for a while
   * (refused as too soon, or KIS unreachable) falls back on the token still held; with none good,
   * the call is unavailable. A refused key or secret is a refusal, whatever is held.
   */
  const renew = async (): Promise<KisStoredToken> => {
    const stored = await read();
    if (tokenFreshness(stored, now(), options.renewBeforeMs) === 'fresh') return stored!;
    if (await store.claimIssue(key, holder, now(), claimMs)) return issueAndSave();
    if (good(stored)) {
      renewNotBefore = now() + CLAIM_RETRY_MS;
      return stored;
    }
    return awaitOthers();
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
      const stored = tokenFreshness(held, now(), options.renewBeforeMs) === 'fresh' ? held : await read();
      const state = tokenFreshness(stored, now(), options.renewBeforeMs);
      if (state === 'fresh' || (state === 'renew' && now() < renewNotBefore)) return stored!.accessToken;
      return (await renewOnce()).accessToken;
    },
    /**
     * KIS refused this token (expired or revoked before its time): forget it and get another.
     * Callers that were refused the same token share one renewal.
     */
    refused: async (accessToken: string): Promise<string> => {
      await store.drop(key, accessToken);
      const stored = await read();
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
