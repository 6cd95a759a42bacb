// The context procedures see. The inner part is independent of the transport: the areas, who is
// asking (the bearer credential, resolved by the guard), from where, and a request-scoped logger.
// REST, /trpc and the WebSocket channels each build it from the facts of their request.
import type { RequestOrigin } from '../audit/log.ts';
import type { Feeds } from '../events/feeds.ts';
import type { Logger } from '../observability/logger.ts';
import type { Areas, Services } from '../services.ts';

/** Response details a procedure or middleware decides and the transport applies. */
export interface HttpResponseState {
  status: number | undefined;
  headers: Record<string, string>;
  /** Route template for logs and metrics (e.g. `/api/auth/me`), set by the transport. */
  route: string | undefined;
  userId: number | undefined;
}

/** What a transport knows about one request. */
export interface RequestFacts {
  origin: RequestOrigin;
  authorization: string | undefined;
}

export interface RequestState extends RequestFacts {
  http: HttpResponseState;
  startedAt: bigint;
}

/**
 * The WebSocket a call came on (/trpc's), which subscriptions need: the instance's per-user feeds
 * they read, the socket's bounds on how many it holds at once and how far each may fall behind,
 * and its end when one does.
 */
export interface SocketScope {
  feeds: Feeds;
  /** Takes one of the socket's subscription slots until `signal` aborts or the release is called; throws past the cap. */
  holdSubscription(signal: AbortSignal | undefined): () => void;
  /** Frames a subscription may hold for its reader beyond those of its start (WS_MAX_QUEUED_FRAMES). */
  maxQueuedFrames: number;
  /** A subscription fell further behind: the socket is closed as a slow reader's (1013), and logged once. */
  tooSlow(): void;
}

export interface Context extends Areas {
  origin: RequestOrigin;
  authorization: string | undefined;
  /**
   * The request-scoped logger (it carries the request id), made on first call: most requests never
   * log from a procedure. A method, not a getter, since tRPC spreads the context at every
   * middleware and a spread would run a getter, making a child logger per request.
   */
  log(): Logger;
  http: HttpResponseState;
  /** Set on /trpc's WebSocket only: subscriptions are served there and nowhere else. */
  socket?: SocketScope | undefined;
}

export const newResponseState = (): HttpResponseState => ({ status: undefined, headers: {}, route: undefined, userId: undefined });

export const createInnerContext = (services: Services, facts: RequestFacts, http: HttpResponseState = newResponseState()): Context => {
  let logger: Logger | undefined;
  return {
    auth: services.auth,
    sessions: services.sessions,
    apiKeys: services.apiKeys,
    users: services.users,
    halt: services.halt,
    instruments: services.instruments,
    marketData: services.marketData,
    brokers: services.brokers,
    keys: services.keys,
    orders: services.orders,
    events: services.events,
    backtests: services.backtests,
    analysis: services.analysis,
    live: services.live,
    bots: services.bots,
    audit: services.audit,
    portfolio: services.portfolio,
    notifications: services.notifications,
    signals: services.signals,
    origin: facts.origin,
    authorization: facts.authorization,
    http,
    log: () => (logger ??= services.logger.child({ reqId: facts.origin.requestId })),
  };
};

/** The context of an HTTP request (REST or /trpc). */
export const contextFor = (services: Services, state: RequestState): Context => createInnerContext(services, state, state.http);
