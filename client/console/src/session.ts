// The signed-in session: the access token lives in memory only; the refresh token is kept
// (refresh-store.ts) so a reload or a second tab can sign in again. Refreshes are single-flight
// in this tab (one promise) and across tabs (a Web Lock, the token read and written inside it),
// because a refresh token is single-use: presenting a rotated one twice would revoke the whole
// family.
import { createTradingClient, TradingApiError, type TTokenResponse } from '@trading-service/client';
import { REFRESH_LOCK } from './refresh-lock.ts';
import { refreshStore } from './refresh-store.ts';

/**
 * Refresh this long before the access token expires, so a request never carries a stale one: 30 s,
 * or a quarter of the token's life when that is shorter (a service set to short-lived tokens).
 */
const EARLY_MS = 30_000;

export type TSessionState = 'restoring' | 'signed_in' | 'signed_out';

interface AccessToken {
  token: string;
  /** When to refresh it: EARLY_MS before it expires, or a quarter of its life. */
  refreshAt: number;
}

/** Talks to the public auth routes only: it never asks the session for a token. */
const publicClient = createTradingClient({ url: window.location.origin });

let access: AccessToken | undefined;
let inflight: Promise<string | undefined> | undefined;
let state: TSessionState = refreshStore.mirror() ? 'restoring' : 'signed_out';
const listeners = new Set<() => void>();

const setState = (next: TSessionState) => {
  if (next === state) return;
  state = next;
  for (const listener of listeners) listener();
};

/**
 * Takes new tokens; resolves once the refresh token is where every tab's next refresh reads it.
 * Signed in only then: the pages show once the new token is kept, so a reload or a link opened
 * from them presents it, never the one the service has just rotated away (which would revoke the
 * whole session).
 */
const keep = async (tokens: TTokenResponse): Promise<void> => {
  const lifeMs = tokens.expires_in * 1000;
  access = { token: tokens.access_token, refreshAt: Date.now() + lifeMs - Math.min(EARLY_MS, lifeMs / 4) };
  await refreshStore.write(tokens.refresh_token);
  setState('signed_in');
};

const forget = () => {
  access = undefined;
  setState('signed_out');
  void refreshStore.clear();
};

/**
 * Rotates the stored refresh token: read inside the lock, so another tab's rotation is seen, and
 * the new one written before the lock is let go.
 */
const rotate = async (): Promise<string | undefined> => {
  const refreshToken = await refreshStore.read();
  if (!refreshToken) {
    forget();
    return undefined;
  }
  try {
    await keep(await publicClient.rest.post<TTokenResponse>('/api/auth/refresh', { refresh_token: refreshToken }));
    return access?.token;
  } catch (error) {
    // Only a refused token (401) ends the session. A halt (503) or a network failure keeps the
    // refresh token for the next attempt: a halt must not sign everyone out.
    if (error instanceof TradingApiError && error.status === 401) forget();
    else if (state === 'restoring') setState('signed_out');
    return undefined;
  }
};

/** The refresh under a lock held by one tab at a time (where the browser has Web Locks). */
const rotateAlone = async (): Promise<string | undefined> => (navigator.locks ? await navigator.locks.request(REFRESH_LOCK, rotate) : rotate());

const refresh = (): Promise<string | undefined> =>
  (inflight ??= rotateAlone().finally(() => {
    inflight = undefined;
  }));

export const session = {
  state: (): TSessionState => state,
  subscribe: (listener: () => void): (() => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  /** The access token for the next request, refreshed first when it is about to expire. */
  accessToken: async (): Promise<string | undefined> => {
    if (access && access.refreshAt > Date.now()) return access.token;
    if (state === 'signed_out') return undefined;
    return refresh();
  },
  /** Forgets the access token only: the next request refreshes it (or ends the session). */
  dropAccess: (): void => {
    access = undefined;
  },
  refreshToken: (): string | undefined => refreshStore.mirror(),
  /** Resolves once signed in: the refresh token kept (keep). */
  signIn: (tokens: TTokenResponse): Promise<void> => keep(tokens),
  signOut: forget,
  /** On load: turns a kept refresh token into a session (or ends it). */
  restore: async (): Promise<void> => {
    if (state === 'restoring') await refresh();
  },
};
