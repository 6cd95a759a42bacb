// The one typed client of the console and its TanStack Query wiring (tRPC's options proxy over
// the project's client, so query keys and types come from the routers).
import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { createTRPCOptionsProxy } from '@trpc/tanstack-react-query';
import { createTradingClient, errorCodeOf, type AppRouter } from '@trading-service/client';
import { session } from './session.ts';

export const tradingClient = createTradingClient({ url: window.location.origin, getToken: () => session.accessToken() });

/** A 401 means the access token ended early (a logout elsewhere, a password change): the next call refreshes. */
const dropAccessOn401 = (error: unknown) => {
  if (errorCodeOf(error) === 'UNAUTHORIZED') session.dropAccess();
};

export const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: dropAccessOn401 }),
  mutationCache: new MutationCache({ onError: dropAccessOn401 }),
  defaultOptions: {
    queries: { retry: 1, staleTime: 5_000, refetchOnWindowFocus: false },
  },
});

export const trpc = createTRPCOptionsProxy<AppRouter>({ client: tradingClient.trpc, queryClient });

export interface TShownError {
  code: string;
  message: string;
  /** Seconds until a 429 may be tried again (the server's Retry-After, in the error's data). */
  retryAfterSec: number | undefined;
}

/** The typed client's error data carries `retryAfterSec` beside the domain code (server/trpc/errors.ts). */
const retryAfterOf = (error: unknown): number | undefined => {
  const data = (error as { data?: { retryAfterSec?: unknown } } | null)?.data;
  return typeof data?.retryAfterSec === 'number' ? data.retryAfterSec : undefined;
};

/** What a refusal says to the user: the domain code, the server's message and when to retry. */
export const shownError = (error: unknown): TShownError => ({
  code: errorCodeOf(error) ?? 'ERROR',
  message: error instanceof Error ? error.message : String(error),
  retryAfterSec: retryAfterOf(error),
});
