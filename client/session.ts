// A signed-in session the client keeps alive: the access token is refreshed before it expires and
// again when the service answers 401, single-flight, because a refresh token is single-use (the
// service rotates it, and a rotated one presented twice revokes the whole session).
import type { TTokenResponse } from '../contracts/auth.ts';

export interface SessionOptions {
  /** The tokens of a login (or of an earlier refresh). */
  tokens: TTokenResponse;
  /** Told every new pair, to store the refresh token: the one it replaces no longer works. */
  onTokens?: (tokens: TTokenResponse) => void;
  /** Told once when the service refuses the refresh token (signed out, revoked, expired). */
  onEnded?: () => void;
  /** Milliseconds since the epoch, for when to refresh; defaults to Date.now. */
  now?: () => number;
}

/**
 * Refresh this long before the access token expires, so that a request seldom carries a stale one:
 * 30 s, or a quarter of the token's life when that is shorter.
 */
const EARLY_MS = 30_000;

export interface Session {
  /** The access token for the next request, refreshed first when it is about to expire. */
  accessToken(): Promise<string | undefined>;
  /**
   * After a 401 to a request sent with `used`: whether a newer access token is there to retry
   * with (one refresh for every request that failed with the same token).
   */
  renewAfter(used: string | undefined): Promise<boolean>;
}

export const createSession = (base: string, doFetch: typeof globalThis.fetch, options: SessionOptions): Session => {
  const now = options.now ?? Date.now;
  let tokens: TTokenResponse | undefined;
  let refreshAt = 0;
  const keep = (next: TTokenResponse) => {
    const lifeMs = next.expires_in * 1000;
    tokens = next;
    refreshAt = now() + lifeMs - Math.min(EARLY_MS, lifeMs / 4);
  };
  keep(options.tokens);

  /** One refresh at a time: every caller that needs one while it runs shares it. */
  let inflight: Promise<boolean> | undefined;
  const rotate = async (): Promise<boolean> => {
    const refreshToken = tokens?.refresh_token;
    if (!refreshToken) return false;
    const response = await doFetch(`${base}/api/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    });
    if (response.ok) {
      keep((await response.json()) as TTokenResponse);
      options.onTokens?.(tokens!);
      return true;
    }
    // Only a refused token ends the session: a halt (503) or a failure on the way keeps it for
    // the next attempt.
    if (response.status === 401) {
      tokens = undefined;
      options.onEnded?.();
    }
    return false;
  };
  const refresh = (): Promise<boolean> =>
    (inflight ??= rotate()
      .catch(() => false)
      .finally(() => {
        inflight = undefined;
      }));

  return {
    accessToken: async () => {
      if (tokens && refreshAt <= now()) await refresh();
      return tokens?.access_token;
    },
    renewAfter: async (used) => {
      if (!tokens) return false;
      // Another request's refresh has already replaced the token this one was sent with.
      if (used !== tokens.access_token) return true;
      return (await refresh()) && tokens !== undefined;
    },
  };
};
