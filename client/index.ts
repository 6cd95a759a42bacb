// The typed client: tRPC over /trpc (superjson) for TypeScript front ends, plus a small REST
// helper that speaks the documented /api paths. Errors from both carry the domain code.
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import type { TAppErrorCode, TErrorBody, TFieldError } from '../contracts/errors.ts';
import type { AppRouter } from '../server/routers/index.ts';

export type { AppRouter };
export * from '../contracts/index.ts';

export interface TradingClientOptions {
  /** Base URL of the service, e.g. http://127.0.0.1:8000 */
  url: string;
  /** A fixed access token... */
  token?: string;
  /** ...or a function asked before every request (to hand in a refreshed one). */
  getToken?: () => string | undefined | Promise<string | undefined>;
  fetch?: typeof globalThis.fetch;
}

/** A REST call that answered with an error envelope. */
export class TradingApiError extends Error {
  readonly code: TAppErrorCode;
  readonly status: number;
  readonly errors: TFieldError[] | undefined;
  constructor(body: TErrorBody) {
    super(body.message);
    this.name = 'TradingApiError';
    this.code = body.code;
    this.status = body.status;
    this.errors = body.errors;
  }
}

/** The domain code of an error thrown by either half of the client, if it has one. */
export const errorCodeOf = (error: unknown): TAppErrorCode | undefined => {
  if (error instanceof TradingApiError) return error.code;
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data as { domainCode?: TAppErrorCode } | undefined;
    return data?.domainCode;
  }
  return undefined;
};

type Query = Record<string, string | number | boolean | undefined>;

export const createTradingClient = (options: TradingClientOptions) => {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const tokenOf = async () => options.token ?? (await options.getToken?.());
  const authHeaders = async (): Promise<Record<string, string>> => {
    const token = await tokenOf();
    return token ? { authorization: `Bearer ${token}` } : {};
  };

  const trpc = createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: `${base}/trpc`, transformer: superjson, headers: authHeaders, fetch: doFetch })],
  });

  const request = async <T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> => {
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { ...(await authHeaders()) };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const response = await doFetch(url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    if (response.status === 204) return undefined as T;
    const payload = (await response.json());
    if (!response.ok) throw new TradingApiError(payload as TErrorBody);
    return payload as T;
  };

  const rest = {
    get: <T>(path: string, query?: Query) => request<T>('GET', path, { query }),
    post: <T>(path: string, body?: unknown) => request<T>('POST', path, { body: body ?? {} }),
    patch: <T>(path: string, body?: unknown) => request<T>('PATCH', path, { body: body ?? {} }),
    delete: (path: string, query?: Query) => request<void>('DELETE', path, { query }),
  };

  return { trpc, rest };
};

export type TradingClient = ReturnType<typeof createTradingClient>;
