// How the broker benches time an order's way through a venue (brokers.ts, emulator.ts): market
// orders one at a time, each one's 201, its `fill` frame on /ws/equity/orders, and, for a venue
// that streams its events, the way from the fake sending the fill on its stream to that frame
// (the fakes run in the bench's process, so both instants are on one clock). And a trading user
// made as a client makes one.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { fixed, percentile, type CleanupStep } from './common.ts';
import { postJson } from './service.ts';

const FILL_TIMEOUT_MS = 15_000;

export interface Venue {
  name: string;
  url: string;
  token: string;
  order: { asset_class: string; symbol: string; qty: number };
  /** When the venue's stream sent the order's fill (performance.now(), this process): for the stream-to-frame figure. */
  fillSentAt?: (clientOrderId: string) => number | undefined;
}

/** The user's order events, with a waiter for one order's fill frame. */
const orderFrames = async (url: string, token: string, cleanups: CleanupStep[]) => {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws/equity/orders?token=${encodeURIComponent(token)}`);
  cleanups.push({ what: 'orders socket', run: () => ws.close() });
  const waiting = new Map<string, (at: number) => void>();
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { type?: string; event_type?: string; client_order_id?: string };
    if (frame.type === 'order_event' && frame.event_type === 'fill' && frame.client_order_id) waiting.get(frame.client_order_id)?.(performance.now());
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    /** The service allows WS_MAX_CONNECTIONS_PER_USER sockets a user (5): each measure closes its own. */
    close: () =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once('close', () => resolve());
        ws.close();
      }),
    fillOf: (clientOrderId: string) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no fill frame for ${clientOrderId} within ${FILL_TIMEOUT_MS} ms`)), FILL_TIMEOUT_MS);
        waiting.set(clientOrderId, (at) => {
          clearTimeout(timer);
          waiting.delete(clientOrderId);
          resolve(at);
        });
      }),
  };
};

/** One market buy after another: each one's 201 and its fill frame, in ms from the POST, and from the venue's stream to the frame; each sorted. */
export const measureMarketOrders = async (venue: Venue, count: number, tag: string, cleanups: CleanupStep[]) => {
  const frames = await orderFrames(venue.url, venue.token, cleanups);
  const roundTrips: number[] = [];
  const fills: number[] = [];
  const streamToFrame: number[] = [];
  for (let i = 0; i < count; i++) {
    const clientOrderId = `bench-${venue.name.replace(/\W/g, '')}-${tag}-${i}`;
    const filled = frames.fillOf(clientOrderId);
    const sent = performance.now();
    const answer = await postJson(`${venue.url}/api/equity/orders`, { ...venue.order, side: 'buy', order_type: 'market', client_order_id: clientOrderId }, venue.token);
    const answered = performance.now();
    if (answer.status !== 201) throw new Error(`${venue.name}: order ${i} answered ${answer.status} ${answer.text}`);
    roundTrips.push(answered - sent);
    const frameAt = await filled;
    fills.push(frameAt - sent);
    const streamSent = venue.fillSentAt?.(clientOrderId);
    if (streamSent !== undefined) streamToFrame.push(frameAt - streamSent);
  }
  await frames.close();
  const sorted = (values: number[]) => values.sort((a, b) => a - b);
  return { roundTrips: sorted(roundTrips), fills: sorted(fills), streamToFrame: sorted(streamToFrame) };
};

/** The stream-to-frame figure of a venue as the broker benches print it. */
export const streamToFrameLine = (name: string, streamToFrame: readonly number[]) =>
  `${name.padEnd(38)} p50 ${fixed(percentile(streamToFrame, 50), 1)} ms, p99 ${fixed(percentile(streamToFrame, 99), 1)} ms (${streamToFrame.length} fills)`;

/** A user registered and logged in over HTTP, with its broker keys; answers its access token. */
export const benchTrader = async (url: string, prefix: string, keys: Record<string, unknown>[]) => {
  const username = `${prefix}_${process.pid}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const registered = await postJson(`${url}/api/auth/register`, { username, email: `${username}@example.com`, password });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
  const login = await postJson(`${url}/api/auth/login`, { username, password });
  const token = String(login.json?.access_token);
  for (const key of keys) {
    const created = await postJson(`${url}/api/exchange-keys`, key, token);
    if (created.status !== 201) throw new Error(`key failed: ${created.status} ${created.text}`);
  }
  return token;
};
