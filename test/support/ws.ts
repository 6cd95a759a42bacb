// A WebSocket client for tests: collects frames, waits for one that matches, and tells how the
// server closed the connection.
import { WebSocket } from 'ws';
import type { TestServer } from './server.ts';
import { SAFETY_NET_MS, waitFor } from './wait.ts';

export interface Closed {
  code: number;
  reason: string;
}

export interface TestSocket {
  ws: WebSocket;
  /** Every JSON frame received so far, in order. */
  frames: Record<string, any>[];
  /** The first frame (from `from` on) that matches, waiting up to `ms`. */
  next(match?: (frame: Record<string, any>) => boolean, opts?: { from?: number; ms?: number }): Promise<Record<string, any>>;
  /** Resolves when the connection is closed, with the server's code and reason. */
  closed: Promise<Closed>;
  close(): Promise<Closed>;
}

export const wsUrl = (server: TestServer, path: string, query: Record<string, string | undefined> = {}) => {
  const url = new URL(path, server.url.replace(/^http/, 'ws'));
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
};

export const connect = (url: string, options: { autoPong?: boolean } = {}): TestSocket => {
  const ws = new WebSocket(url, { autoPong: options.autoPong ?? true });
  const frames: Record<string, any>[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data: Buffer) => {
    frames.push(JSON.parse(data.toString('utf8')) as Record<string, any>);
    for (const waiter of [...waiters]) waiter();
  });
  const closed = new Promise<Closed>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) });
      for (const waiter of [...waiters]) waiter();
    });
  });
  ws.on('error', () => undefined);
  const next: TestSocket['next'] = (match = () => true, { from = 0, ms = SAFETY_NET_MS } = {}) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = frames.slice(from).find(match);
        if (found) {
          done();
          resolve(found);
        } else if (ws.readyState === WebSocket.CLOSED) {
          done();
          reject(new Error(`socket closed; frames: ${JSON.stringify(frames)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching frame within ${ms} ms; frames: ${JSON.stringify(frames)}`));
      }, ms);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return {
    ws,
    frames,
    next,
    closed,
    close: () => {
      ws.close();
      return closed;
    },
  };
};

/**
 * Resolves once the user's /ws/live connection is subscribed on the server (/ws/live sends no
 * hello to wait for): a frame committed before that is history to it. The live feed holds two
 * subscriptions, order events (to follow the symbols the user holds) and then the live channel.
 */
export const liveSubscribed = (server: TestServer, userId: number) =>
  waitFor(() => Promise.resolve(server.services.events.subscriptionsOf(userId)), (count) => count >= 2);
