// The typed client: tRPC over /trpc (superjson) for TypeScript front ends, plus a small REST
// helper that speaks the documented /api paths. Errors from both carry the domain code.
import { createTRPCClient, createWSClient, httpBatchLink, splitLink, TRPCClientError, wsLink } from '@trpc/client';
import superjson from 'superjson';
import type { TAssetClass } from '../contracts/common.ts';
import type { TAppErrorCode, TErrorBody, TFieldError } from '../contracts/errors.ts';
import type { TOrderEventFrame, TOrdersFrame } from '../contracts/events.ts';
import type { TOrderList } from '../contracts/orders.ts';
import type { AppRouter } from './router.ts';
import { backoffMs, connectLiveChannel, connectOrdersChannel, type Channel, type ChannelOptions, type TChannelState, type WebSocketFactory } from './channels.ts';
import { createSession, type SessionOptions } from './session.ts';

export type { AppRouter };
export * from '../contracts/index.ts';
export { backoffMs, connectLiveChannel, connectOrdersChannel, type Channel, type ChannelOptions, type TChannelState, type WebSocketFactory };
export type { SessionOptions };

export interface TradingClientOptions {
  /** Base URL of the service, e.g. http://127.0.0.1:8000 */
  url: string;
  /** A fixed access token... */
  token?: string;
  /** ...or a function asked before every request (to hand in a refreshed one)... */
  getToken?: () => string | undefined | Promise<string | undefined>;
  /**
   * ...or the tokens of a login, kept alive by the client: the access token is refreshed before
   * it expires and when a request meets a 401 (then sent again once), one refresh at a time.
   */
  session?: SessionOptions;
  fetch?: typeof globalThis.fetch;
  /** For the channels and tRPC subscriptions; defaults to globalThis.WebSocket. */
  webSocket?: WebSocketFactory;
  /**
   * The most calls sent in one HTTP batch (more are split over several requests): at most the
   * server's TRPC_MAX_BATCH_SIZE, whose default is 50, or the server refuses the whole batch.
   */
  maxBatchSize?: number;
}

/** The server's TRPC_MAX_BATCH_SIZE default. */
const DEFAULT_MAX_BATCH_SIZE = 50;

export interface FollowOrdersOptions {
  /** Every order event, live or resumed after a reconnect. */
  onEvent: (event: TOrderEventFrame) => void;
  /**
   * After every (re)connect: the newest orders of each asset class the hello names, read with
   * GET /api/equity/orders, so a client that missed events (longer than the server keeps them)
   * still ends up with the current state.
   */
  onBackfill?: (assetClass: TAssetClass, orders: TOrderList) => void;
  onState?: ChannelOptions<TOrdersFrame>['onState'];
  /** How many orders per asset class the backfill reads (1-100, default 100). */
  backfillSize?: number;
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

const PUBLIC_AUTH_PATHS = new Set(['/api/auth/register', '/api/auth/login', '/api/auth/refresh']);

export const createTradingClient = (options: TradingClientOptions) => {
  const base = options.url.replace(/\/+$/, '');
  const plainFetch = options.fetch ?? globalThis.fetch;
  const session = options.session && createSession(base, plainFetch, options.session);
  const tokenOf = async () => options.token ?? (session ? await session.accessToken() : await options.getToken?.());
  const authHeaders = async (): Promise<Record<string, string>> => {
    const token = await tokenOf();
    return token ? { authorization: `Bearer ${token}` } : {};
  };
  /** With a session: a request refused for its token is sent once more with the renewed one. */
  const doFetch: typeof globalThis.fetch = !session
    ? plainFetch
    : async (input, init) => {
        const headers = new Headers(init?.headers);
        const used = headers.get('authorization')?.replace(/^Bearer /, '');
        const response = await plainFetch(input, init);
        if (response.status !== 401 || used === undefined || !(await session.renewAfter(used))) return response;
        headers.set('authorization', `Bearer ${(await tokenOf()) ?? ''}`);
        return plainFetch(input, { ...init, headers });
      };

  // Subscriptions travel over tRPC's WebSocket protocol (opened on first use, the token in the
  // connection params); everything else over HTTP.
  let wsClient: ReturnType<typeof createWSClient> | undefined;
  const subscriptionsLink = () => {
    wsClient ??= createWSClient({
      url: `${base.replace(/^http/, 'ws')}/trpc`,
      lazy: { enabled: true, closeMs: 0 },
      connectionParams: async () => ({ token: (await tokenOf()) ?? '' }),
      ...(options.webSocket ? { WebSocket: options.webSocket as unknown as typeof WebSocket } : {}),
    });
    return wsLink<AppRouter>({ client: wsClient, transformer: superjson });
  };
  const trpc = createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: subscriptionsLink(),
        false: httpBatchLink({ url: `${base}/trpc`, transformer: superjson, headers: authHeaders, fetch: doFetch, maxItems: options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE }),
      }),
    ],
  });

  const request = async <T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> => {
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    // The routes that sign in take no token: their 401 is about the credentials, not the session.
    const headers: Record<string, string> = PUBLIC_AUTH_PATHS.has(path) ? {} : { ...(await authHeaders()) };
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

  const channelOptions = { url: base, getToken: tokenOf, ...(options.webSocket ? { webSocket: options.webSocket } : {}) };

  /**
   * Follows the user's orders: /ws/equity/orders with reconnects that resume after the last
   * event, and a backfill through GET /api/equity/orders after every (re)connect.
   */
  const followOrders = (follow: FollowOrdersOptions): Channel =>
    connectOrdersChannel({
      ...channelOptions,
      onState: follow.onState,
      onFrame: (frame) => {
        if (frame.type === 'order_event') {
          follow.onEvent(frame);
          return;
        }
        if (!follow.onBackfill) return;
        for (const assetClass of frame.asset_classes) {
          rest
            .get<TOrderList>('/api/equity/orders', { asset_class: assetClass, size: follow.backfillSize ?? 100 })
            .then((orders) => follow.onBackfill?.(assetClass, orders))
            .catch(() => undefined); // the next reconnect backfills again
        }
      },
    });

  const channels = {
    orders: (opts: Omit<ChannelOptions<TOrdersFrame>, 'url' | 'getToken'>) => connectOrdersChannel({ ...channelOptions, ...opts }),
    live: (opts: Omit<ChannelOptions<Parameters<Parameters<typeof connectLiveChannel>[0]['onFrame']>[0]>, 'url' | 'getToken'>) => connectLiveChannel({ ...channelOptions, ...opts }),
  };

  /** Closes the tRPC WebSocket, if one was opened. */
  const close = async (): Promise<void> => {
    await wsClient?.close();
  };

  return { trpc, rest, followOrders, channels, close };
};

export type TradingClient = ReturnType<typeof createTradingClient>;
