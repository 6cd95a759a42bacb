// The WebSocket channels for clients (browser or Node 22+, any WHATWG WebSocket): one
// connection that comes back by itself with jittered backoff (1, 2, 4 … 30 s), resumes after
// the last event it saw (last_event_id), and asks for a fresh token each time it connects.
import type { THelloFrame, TLiveFrame, TOrdersFrame } from '../contracts/events.ts';
import { WS_CLOSE, WS_PATHS } from '../contracts/events.ts';

/** The reconnect delays: 1, 2, 4 … up to 30 s, each jittered by ±20 % so clients do not return in step. */
export const backoffMs = (attempt: number, random: () => number = Math.random): number => {
  const base = Math.min(30_000, 1_000 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.8 + 0.4 * random()));
};

/** What the client needs of a WebSocket: the WHATWG interface (globalThis.WebSocket). */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}
export type WebSocketFactory = (url: string) => WebSocketLike;

export type TChannelState = 'connecting' | 'open' | 'waiting' | 'closed';

export interface ChannelOptions<TFrame> {
  /** Base URL of the service, e.g. http://127.0.0.1:8000 (ws:// or wss:// is derived). */
  url: string;
  /** Asked before every connect, so a refreshed token is used after a reconnect. */
  getToken: () => string | undefined | Promise<string | undefined>;
  onFrame: (frame: TFrame) => void;
  /** Called on every state change; `closeCode` is the server's code when it closed the socket. */
  onState?: (state: TChannelState, detail: { attempt: number; closeCode?: number; reason?: string; delayMs?: number }) => void;
  /** Defaults to globalThis.WebSocket. */
  webSocket?: WebSocketFactory;
  random?: () => number;
}

export interface Channel {
  /** Stops for good: no reconnect. */
  close(): void;
  /** The event_id of the last durable event received (what a reconnect resumes after). */
  lastEventId(): string | undefined;
}

const wsBase = (url: string) => url.replace(/\/+$/, '').replace(/^http/, 'ws');

const openChannel = <TFrame extends { type: string }>(path: string, options: ChannelOptions<TFrame>): Channel => {
  const factory: WebSocketFactory =
    options.webSocket ??
    ((url) => {
      const Native = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
      if (!Native) throw new Error('no WebSocket in this runtime: pass options.webSocket');
      return new Native(url);
    });
  let socket: WebSocketLike | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;
  let stopped = false;
  let lastEventId: string | undefined;
  const state = (next: TChannelState, detail: { closeCode?: number; reason?: string; delayMs?: number } = {}) => options.onState?.(next, { attempt, ...detail });

  const connect = async () => {
    timer = undefined;
    if (stopped) return;
    state('connecting');
    let token: string | undefined;
    try {
      token = await options.getToken();
    } catch {
      token = undefined;
    }
    if (stopped) return;
    const url = new URL(`${wsBase(options.url)}${path}`);
    if (token) url.searchParams.set('token', token);
    if (lastEventId) url.searchParams.set('last_event_id', lastEventId);
    const ws = factory(url.toString());
    socket = ws;
    ws.onopen = () => {
      attempt = 0;
      state('open');
    };
    ws.onmessage = (event) => {
      let frame: TFrame & { event_id?: string };
      try {
        frame = JSON.parse(String(event.data)) as TFrame & { event_id?: string };
      } catch {
        return; // not a frame of ours
      }
      if (typeof frame.event_id === 'string') lastEventId = frame.event_id;
      options.onFrame(frame);
    };
    ws.onerror = () => undefined; // a close follows
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = undefined;
      if (stopped) {
        state('closed', { closeCode: event.code, reason: event.reason });
        return;
      }
      // Every close is retried: after 4001 the next attempt asks getToken for a fresh token.
      const delayMs = backoffMs(attempt, options.random);
      attempt += 1;
      state('waiting', { closeCode: event.code, reason: event.reason, delayMs });
      timer = setTimeout(() => void connect(), delayMs);
    };
  };
  void connect();

  return {
    close: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (socket) socket.close(WS_CLOSE.normal, 'client closed');
      else state('closed');
    },
    lastEventId: () => lastEventId,
  };
};

/** /ws/equity/orders: hello after every (re)connect, then order_event frames. */
export const connectOrdersChannel = (options: ChannelOptions<TOrdersFrame>): Channel => openChannel(WS_PATHS.orders, options);

/** /ws/live: trades, signals, bot status and ticks. */
export const connectLiveChannel = (options: ChannelOptions<TLiveFrame>): Channel => openChannel(WS_PATHS.live, options);

export type { THelloFrame };
