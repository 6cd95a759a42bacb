// /trpc's WebSocket under the channels' rules: a subscription ends (the socket closes with the
// channel's code, and the typed client's subscription ends with the domain error) after
// logout-all, a password change, a deactivation, the token's expiry and a halt; the per-user
// socket cap, the per-socket subscription cap, the send bound, the time to show a token, the
// batch cap and the payload limit; a subscription that falls WS_MAX_QUEUED_FRAMES behind closes
// its socket as a full send buffer does, while a resume's whole backfill is taken; and one user's
// live subscriptions share one read of the watched symbols per order event.
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import { asc, eq } from 'drizzle-orm';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { errorCodeOf } from '../../client/index.ts';
import { WS_CLOSE } from '../../contracts/events.ts';
import { manualClock } from '../../server/clock.ts';
import { outboxEvents } from '../../server/db/schema/index.ts';
import { BACKFILL_LIMIT } from '../../server/events/bus.ts';
import { committedEnd, settledEnd } from '../../server/events/queries.ts';
import type { AppRouter } from '../../server/routers/index.ts';
import { FACTORY_PASSWORD, newUser, type FactoryUser } from '../support/factories.ts';
import { capturedLogger } from '../support/logs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { wsUrl } from '../support/ws.ts';

const BODY_LIMIT_BYTES = 16_384;
const MAX_SUBSCRIPTIONS = 5;
/** Above the subscription cap: the typed client sends the subscriptions made in one tick as one batch. */
const MAX_BATCH = 8;

let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;
/** The heartbeat's rounds run when the test moves this clock, never by themselves. */
const beat = manualClock();

beforeAll(async () => {
  server = await startTestServer({
    SIM_TICK_INTERVAL_MS: '0',
    RATE_LIMIT_ORDERS_PER_MIN: '1000',
    BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
    WS_MAX_CONNECTIONS_PER_USER: '2',
    WS_MAX_SUBSCRIPTIONS_PER_SOCKET: String(MAX_SUBSCRIPTIONS),
    TRPC_MAX_BATCH_SIZE: String(MAX_BATCH),
  }, undefined, { heartbeatClock: beat });
  admin = await newUser(server, { role: 'admin', prefix: 'tws_admin' });
  const price = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } });
  expect(price.status, price.text).toBe(200);
});
afterAll(() => server?.stop());

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

const trader = async (on: TestServer, prefix: string) => {
  const user = await newUser(on, { prefix });
  const res = await on.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `tws-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const buy = (user: FactoryUser, clientOrderId: string) =>
  server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: clientOrderId } });

/** tRPC's own WebSocket client, as typed clients use it, noting the codes its sockets were closed with. */
const typedClient = (on: TestServer, token: string) => {
  const closes: number[] = [];
  const wsClient = createWSClient({
    url: wsUrl(on, '/trpc'),
    lazy: { enabled: true, closeMs: 0 },
    connectionParams: { token },
    onClose: (cause) => closes.push(cause?.code ?? 0),
  });
  const trpc = createTRPCClient<AppRouter>({ links: [wsLink<AppRouter>({ client: wsClient, transformer: superjson })] });
  const close = () => wsClient.close();
  cleanups.push(close);
  return { trpc, closes, close };
};

interface Followed {
  frames: Record<string, any>[];
  error: unknown;
  unsubscribe(): void;
}
const follow = (client: ReturnType<typeof typedClient>, path: 'orders' | 'live'): Followed => {
  const followed: Followed = { frames: [], error: undefined, unsubscribe: () => undefined };
  const handlers = {
    onData: (value: object) => followed.frames.push('type' in value ? value : (value as { data: Record<string, any> }).data),
    onError: (error: unknown) => (followed.error = error),
  };
  const subscription = path === 'orders' ? client.trpc.events.orders.subscribe(undefined, handlers) : client.trpc.events.live.subscribe(undefined, handlers);
  followed.unsubscribe = () => subscription.unsubscribe();
  return followed;
};

/** A plain `ws` socket speaking tRPC's protocol by hand: every message it got, and how it was closed. */
const rawTrpc = (on: TestServer, query = '?connectionParams=1') => {
  const ws = new WebSocket(wsUrl(on, `/trpc${query}`));
  const messages: any[] = [];
  ws.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8'))));
  ws.on('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  const opened = new Promise<void>((resolve) => ws.once('open', () => resolve()));
  cleanups.push(() => ws.terminate());
  return { ws, messages, closed, opened, sendJson: (value: unknown) => ws.send(JSON.stringify(value)) };
};
const connectionParams = (token: string) => ({ method: 'connectionParams', data: { token } });
const subscribeOrders = (id: number, input: Record<string, unknown> = {}) => ({ id, method: 'subscription', params: { path: 'events.orders', input: { json: input } } });
/** The socket stops reading: its kernel buffers fill, then the server's send buffer. */
const readingOf = (socket: ReturnType<typeof rawTrpc>) => (socket.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;

/**
 * `count` order events of the user, written in one transaction and read here at once: the bus
 * hands them to the user's subscriptions in one turn, before any reader can take one.
 */
const publish = async (on: TestServer, userId: number, count: number) => {
  const frame = { type: 'order_event', event_type: 'open' };
  const at = on.services.clock.now();
  await on.services.db.transaction((tx) => on.services.events.append(tx, Array.from({ length: count }, () => ({ userId, channel: 'orders' as const, frame, at }))));
  await on.services.events.poll();
};

describe('a subscription ends with the right to it', () => {
  const endsWith = async (user: FactoryUser, act: () => Promise<void>, code: number, domainCode: string) => {
    const client = typedClient(server, user.tokens.access_token);
    const orders = follow(client, 'orders');
    await until(() => orders.frames.length, (n) => n >= 1);
    expect(orders.frames[0]).toMatchObject({ type: 'hello', user_id: user.user.id });
    expect(server.channels.connectionsOf(user.user.id)).toBe(1);
    await act();
    // The socket is closed with the channels' code; the client comes back, and is told why it may not go on.
    await until(() => orders.error, (error) => error !== undefined);
    expect(errorCodeOf(orders.error)).toBe(domainCode);
    expect(client.closes).toContain(code);
    await until(() => server.services.events.subscriptionsOf(user.user.id), (count) => count === 0);
    await client.close();
  };

  it('after logout-all (4001, then UNAUTHORIZED)', async () => {
    const user = await trader(server, 'tws_logoutall');
    await endsWith(user, async () => {
      expect((await server.http('POST', '/api/auth/logout-all', { token: user.tokens.access_token })).status).toBe(204);
    }, WS_CLOSE.unauthorized, 'UNAUTHORIZED');
  });

  it('after a password change (4001, then UNAUTHORIZED)', async () => {
    const user = await trader(server, 'tws_password');
    await endsWith(user, async () => {
      const res = await server.http('POST', '/api/auth/password', { token: user.tokens.access_token, body: { current_password: FACTORY_PASSWORD, new_password: 'a-new-password-456' } });
      expect(res.status, res.text).toBe(204);
    }, WS_CLOSE.unauthorized, 'UNAUTHORIZED');
  });

  it('after a deactivation (4001, then UNAUTHORIZED)', async () => {
    const user = await trader(server, 'tws_deact');
    await endsWith(user, async () => {
      const res = await server.http('POST', `/api/admin/users/${user.user.id}/deactivate`, { token: admin.tokens.access_token });
      expect(res.status, res.text).toBe(200);
    }, WS_CLOSE.unauthorized, 'UNAUTHORIZED');
  });

  it('after a halt (1013, then SERVICE_HALTED)', async () => {
    const user = await trader(server, 'tws_halt');
    const halt = (halted: boolean) => server.http('POST', '/api/admin/halt', { token: admin.tokens.access_token, body: { halted } });
    try {
      await endsWith(user, async () => {
        expect((await halt(true)).status).toBe(200);
      }, WS_CLOSE.tryAgainLater, 'SERVICE_HALTED');
    } finally {
      expect((await halt(false)).status).toBe(200);
    }
  });

  it("after the token's expiry, at the next heartbeat round (4001, then UNAUTHORIZED)", async () => {
    // One clock for the service and its heartbeat: moving it past the token's expiry runs a round.
    const clock = manualClock();
    const timed = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock, heartbeatClock: clock });
    try {
      const user = await newUser(timed, { prefix: 'tws_expiry' });
      const client = typedClient(timed, user.tokens.access_token);
      const orders = follow(client, 'orders');
      await until(() => orders.frames.length, (n) => n >= 1);
      clock.advance(31 * 60_000);
      await until(() => orders.error, (error) => error !== undefined);
      expect(errorCodeOf(orders.error)).toBe('UNAUTHORIZED');
      expect(client.closes).toContain(WS_CLOSE.unauthorized);
      await until(() => timed.services.events.subscriptionsOf(user.user.id), (count) => count === 0);
      await client.close();
    } finally {
      await timed.stop();
    }
  });
});

describe('bounds', () => {
  it('counts /trpc sockets in the per-user cap with the channels: one more is refused with 1008 after an error the client backs off from', async () => {
    const user = await newUser(server, { prefix: 'tws_cap' });
    const sockets = [rawTrpc(server), rawTrpc(server)];
    for (const socket of sockets) {
      await socket.opened;
      socket.sendJson(connectionParams(user.tokens.access_token));
    }
    await until(() => server.channels.connectionsOf(user.user.id), (count) => count === 2);
    const third = rawTrpc(server);
    await third.opened;
    third.sendJson(connectionParams(user.tokens.access_token));
    expect(await third.closed).toEqual({ code: WS_CLOSE.policy, reason: 'Too many connections' });
    expect(third.messages[0]).toMatchObject({ id: null, error: { json: { data: { domainCode: 'RATE_LIMIT_EXCEEDED' } } } });
    // A channel counts against the same cap.
    const channel = new WebSocket(wsUrl(server, '/ws/equity/orders', { token: user.tokens.access_token }));
    channel.on('error', () => undefined);
    expect(await new Promise((resolve) => channel.on('close', (code) => resolve(code)))).toBe(WS_CLOSE.policy);
    // A slot freed is free again.
    sockets[0]!.ws.close();
    await until(() => server.channels.connectionsOf(user.user.id), (count) => count === 1);
    const again = typedClient(server, user.tokens.access_token);
    const orders = follow(again, 'orders');
    await until(() => orders.frames.length, (n) => n >= 1);
    await again.close();
  });

  it('refuses a subscription past WS_MAX_SUBSCRIPTIONS_PER_SOCKET (RATE_LIMIT_EXCEEDED); a slot given back is free again', async () => {
    const user = await trader(server, 'tws_subcap');
    const client = typedClient(server, user.tokens.access_token);
    const held = Array.from({ length: MAX_SUBSCRIPTIONS }, () => follow(client, 'orders'));
    await until(() => held.every((sub) => sub.frames.length >= 1), Boolean);
    const over = follow(client, 'orders');
    await until(() => over.error, (error) => error !== undefined);
    expect(errorCodeOf(over.error)).toBe('RATE_LIMIT_EXCEEDED');
    expect(held.every((sub) => sub.error === undefined)).toBe(true);
    held[0]!.unsubscribe();
    const next = follow(client, 'orders');
    await until(() => next.frames.length, (n) => n >= 1);
    expect(next.error).toBeUndefined();
    await client.close();
  });

  it('closes a socket that reads too slowly with 1013 instead of buffering without bound', async () => {
    const user = await newUser(server, { prefix: 'tws_slow' });
    const socket = rawTrpc(server);
    await socket.opened;
    socket.sendJson(connectionParams(user.tokens.access_token));
    socket.sendJson({ id: 1, method: 'subscription', params: { path: 'events.orders', input: { json: {} } } });
    await until(() => socket.messages.length, (n) => n >= 2);
    readingOf(socket).pause();
    // Large frames, few at a time: the send buffer fills long before the subscription's queue (1,000 frames).
    const frame = { type: 'order_event', event_type: 'open', padding: 'x'.repeat(60_000) };
    const slowCloses = async () => {
      const text = await server.services.metrics.registry.getSingleMetricAsString('ws_closed_total');
      return Number(/ws_closed_total\{channel="trpc",code="1013"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await slowCloses();
    for (let round = 0; round < 40 && (await slowCloses()) === before; round++) {
      await server.services.db.transaction((tx) => server.services.events.append(tx, Array.from({ length: 20 }, () => ({ userId: user.user.id, channel: 'orders' as const, frame, at: new Date() }))));
      await server.services.events.poll();
    }
    expect(await slowCloses()).toBe(before + 1);
    // Its close frame waits behind what it has not read, and it cannot answer a ping either: the
    // heartbeat drops it at its third round.
    for (let round = 0; round < 3; round++) beat.advance(server.config.WS_HEARTBEAT_INTERVAL_SEC * 1000);
    await until(() => server.channels.connectionsOf(user.user.id), (count) => count === 0);
    await until(() => server.services.events.subscriptionsOf(user.user.id), (count) => count === 0);
  });

  it('closes a socket that shows no valid token within WS_AUTH_TIMEOUT_SEC (4001), its calls answered UNAUTHORIZED meanwhile', async () => {
    // A server of its own, on a clock that moves only when the test moves it, with a bound longer
    // than the test may take: the sockets of the other tests never race a short bound, and these
    // are closed when the clock says, not when a loaded machine gets round to sending.
    const AUTH_TIMEOUT_SEC = 600;
    const clock = manualClock('2026-03-10T15:00:00Z');
    const strict = await startTestServer({ WS_AUTH_TIMEOUT_SEC: String(AUTH_TIMEOUT_SEC) }, undefined, { clock });
    try {
      const silent = rawTrpc(strict);
      const without = rawTrpc(strict, '');
      const invalid = rawTrpc(strict);
      await Promise.all([silent.opened, without.opened, invalid.opened]);
      invalid.sendJson(connectionParams('garbage'));
      invalid.sendJson({ id: 1, method: 'subscription', params: { path: 'events.orders', input: { json: {} } } });
      // The call's answer: the token before it has been read (and refused).
      await until(() => invalid.messages.length, (count) => count >= 1);
      expect(invalid.messages[0]).toMatchObject({ id: 1, error: { json: { data: { domainCode: 'UNAUTHORIZED' } } } });
      clock.advance(AUTH_TIMEOUT_SEC * 1000);
      expect(await silent.closed).toEqual({ code: WS_CLOSE.unauthorized, reason: 'Missing token' });
      expect(await without.closed).toEqual({ code: WS_CLOSE.unauthorized, reason: 'Missing token' });
      expect(await invalid.closed).toEqual({ code: WS_CLOSE.unauthorized, reason: 'Invalid token' });
    } finally {
      await strict.stop();
    }
  });

  it('refuses a batch of more than TRPC_MAX_BATCH_SIZE calls, each call told so, and serves one of that size', async () => {
    const user = await newUser(server, { prefix: 'tws_batch' });
    const socket = rawTrpc(server);
    await socket.opened;
    socket.sendJson(connectionParams(user.tokens.access_token));
    const calls = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: from + i, method: 'query', params: { path: 'auth.me', input: { json: undefined } } }));
    socket.sendJson(calls(1, MAX_BATCH + 1));
    await until(() => socket.messages.length, (n) => n >= MAX_BATCH + 1);
    for (const message of socket.messages) expect(message).toMatchObject({ error: { json: { message: 'Batch call exceeds maximum size' } } });
    socket.messages.length = 0;
    socket.sendJson(calls(100, MAX_BATCH));
    await until(() => socket.messages.length, (n) => n >= MAX_BATCH);
    for (const message of socket.messages) expect(message).toMatchObject({ result: { type: 'data', data: { json: { id: user.user.id } } } });
    socket.ws.close();
  });

  it('takes a message of BODY_LIMIT_BYTES, as /trpc over HTTP does, and closes one byte more with 1009', async () => {
    const user = await newUser(server, { prefix: 'tws_payload' });
    const socket = rawTrpc(server);
    await socket.opened;
    socket.sendJson(connectionParams(user.tokens.access_token));
    const padded = (id: number, bytes: number) => {
      const text = JSON.stringify({ id, method: 'query', params: { path: 'auth.me', input: { json: undefined } } });
      return text.padEnd(bytes, ' ');
    };
    socket.ws.send(padded(1, BODY_LIMIT_BYTES));
    await until(() => socket.messages.length, (n) => n >= 1);
    expect(socket.messages[0]).toMatchObject({ id: 1, result: { type: 'data', data: { json: { id: user.user.id } } } });
    socket.ws.send(padded(2, BODY_LIMIT_BYTES + 1));
    expect((await socket.closed).code).toBe(WS_CLOSE.tooBig);
    expect(socket.messages).toHaveLength(1);
  });

  it('serves subscriptions only on the socket: over HTTP a subscription is refused, not streamed', async () => {
    const user = await newUser(server, { prefix: 'tws_sse' });
    const res = await fetch(`${server.url}/trpc/events.orders`, { headers: { authorization: `Bearer ${user.tokens.access_token}` }, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    expect(text).toContain('METHOD_NOT_ALLOWED');
    expect(text).not.toContain('hello');
  });
});

describe('a subscription that falls behind its reader', () => {
  const MAX_QUEUED = 50;
  const SLOW = 'closing a WebSocket that reads too slowly';
  const logs = capturedLogger('warn');
  let queued: TestServer;
  beforeAll(async () => {
    queued = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WS_MAX_QUEUED_FRAMES: String(MAX_QUEUED) }, undefined, { logger: logs.logger });
  });
  afterAll(() => queued?.stop());

  it('closes its socket with 1013 (Subscription queue full), logged once; other users keep receiving and the process stays up', async () => {
    const slow = await newUser(queued, { prefix: 'tws_behind' });
    const other = await newUser(queued, { prefix: 'tws_behind_other' });
    const watcher = typedClient(queued, other.tokens.access_token);
    const others = follow(watcher, 'orders');
    const socket = rawTrpc(queued);
    await socket.opened;
    socket.sendJson(connectionParams(slow.tokens.access_token));
    // Two subscriptions of the socket fall behind together: one close, one log line.
    socket.sendJson(subscribeOrders(1));
    socket.sendJson(subscribeOrders(2));
    await until(() => socket.messages.filter((message) => message.result?.data?.json?.type === 'hello').length, (n) => n === 2);
    await until(() => others.frames.length, (n) => n >= 1);
    readingOf(socket).pause();
    await publish(queued, slow.user.id, 4 * MAX_QUEUED);
    await until(() => logs.lines.filter((line) => line.msg === SLOW).length, (n) => n >= 1);
    readingOf(socket).resume();
    expect(await socket.closed).toEqual({ code: WS_CLOSE.tryAgainLater, reason: 'Subscription queue full' });
    // Closed, not answered with an error (which would end a typed client's subscription).
    expect(socket.messages.filter((message) => message.error !== undefined)).toEqual([]);
    await until(() => queued.services.events.subscriptionsOf(slow.user.id), (count) => count === 0);
    const warned = logs.lines.filter((line) => line.msg === SLOW);
    expect(warned).toEqual([expect.objectContaining({ level: 'warn', userId: slow.user.id, kind: 'trpc', reason: 'Subscription queue full', maxQueuedFrames: MAX_QUEUED })]);
    expect(logs.text()).not.toContain(slow.tokens.access_token);
    const closedWith = await queued.services.metrics.registry.getSingleMetricAsString('ws_closed_total');
    expect(closedWith).toMatch(/ws_closed_total\{channel="trpc",code="1013"\} 1\b/);

    await publish(queued, other.user.id, 1);
    await until(() => others.frames.filter((frame) => frame.type === 'order_event').length, (n) => n === 1);
    expect(others.error).toBeUndefined();
    expect(watcher.closes).toEqual([]);
    expect((await queued.http('GET', '/health')).status).toBe(200);
    await watcher.close();
  });

  it("a typed client sees it as a full send buffer: the socket closes with 1013, the client comes back and its subscription goes on", async () => {
    const user = await newUser(queued, { prefix: 'tws_behind_typed' });
    const client = typedClient(queued, user.tokens.access_token);
    const orders = follow(client, 'orders');
    await until(() => orders.frames.length, (n) => n >= 1);
    await publish(queued, user.user.id, 4 * MAX_QUEUED);
    await until(() => client.closes, (closes) => closes.includes(WS_CLOSE.tryAgainLater));
    // Subscribed again on a new socket (its hello again), then served as before.
    await until(() => orders.frames.filter((frame) => frame.type === 'hello').length, (n) => n === 2);
    await publish(queued, user.user.id, 1);
    await until(() => orders.frames.filter((frame) => frame.type === 'order_event').length, (n) => n === 1);
    expect(orders.error).toBeUndefined();
    await client.close();
  });
});

describe('a resume after a long absence', () => {
  it('takes the hello and a whole backfill (BACKFILL_LIMIT events) at once, however far the bound of a subscription', async () => {
    const user = await newUser(server, { prefix: 'tws_resume' });
    await publish(server, user.user.id, BACKFILL_LIMIT + 10);
    // On a shared PostgreSQL cluster another database's open transaction can hold these rows
    // unsettled for a while; once settled they are history, which only the backfill brings.
    await waitFor(
      async () => {
        const [settled, committed] = await Promise.all([settledEnd(server.services.db), committedEnd(server.services.db)]);
        return settled.id === committed.id && settled.txId === committed.txId;
      },
      (caughtUp) => caughtUp,
    );
    await server.services.events.poll();
    const [first] = await server.services.db.select({ id: outboxEvents.id }).from(outboxEvents).where(eq(outboxEvents.userId, user.user.id)).orderBy(asc(outboxEvents.id)).limit(1);
    const socket = rawTrpc(server);
    await socket.opened;
    socket.sendJson(connectionParams(user.tokens.access_token));
    socket.sendJson(subscribeOrders(1, { lastEventId: String(first!.id) }));
    const data = () => socket.messages.filter((message) => message.result?.type === 'data');
    await until(data, (frames) => frames.length === 1 + BACKFILL_LIMIT);
    expect(data()[0]).toMatchObject({ result: { data: { json: { type: 'hello' } } } });
    expect(socket.messages.filter((message) => message.error !== undefined)).toEqual([]);
    // Still subscribed: the next event follows the backfill on the same socket.
    await publish(server, user.user.id, 1);
    await until(data, (frames) => frames.length === 2 + BACKFILL_LIMIT);
    expect(server.channels.connectionsOf(user.user.id)).toBe(1);
    socket.ws.close();
  });
});

describe('shared per-user feed', () => {
  it("costs one read of the watched symbols per order event, however many events.live subscriptions the user holds, and each still gets its ticks", async () => {
    const user = await trader(server, 'tws_shared');
    const client = typedClient(server, user.tokens.access_token);
    const lives = Array.from({ length: MAX_SUBSCRIPTIONS }, () => follow(client, 'live'));
    // Each subscribed to the live channel, and (once for all of them) to the user's order events.
    await until(() => server.services.events.subscriptionsOf(user.user.id), (count) => count >= 1 + MAX_SUBSCRIPTIONS);
    let orderEvents = 0;
    const stopCounting = await server.services.events.subscribe({ userId: user.user.id, channel: 'orders', listener: () => (orderEvents += 1) });
    const reads = vi.spyOn(server.services.orders, 'watchedSymbols');
    try {
      expect((await buy(user, 'tws-shared-1')).status).toBe(201);
      await until(() => lives.every((live) => live.frames.some((frame) => frame.type === 'trade')), Boolean);
      await until(() => orderEvents, (count) => count >= 3);
      // Each order event reaches every listener of the user at once: had every subscription read
      // for itself, the reads would be here already, one per subscription and event.
      expect(reads.mock.calls.length).toBeGreaterThan(0);
      expect(reads.mock.calls.length).toBeLessThanOrEqual(orderEvents);
      // Every subscription follows what the user now holds: a price of it reaches each (a price
      // set before the last read ended may pass unseen, so each round sets another).
      let price = 50_000;
      await waitFor(
        async () => {
          price += 1;
          const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price } });
          expect(res.status, res.text).toBe(200);
          return lives.every((live) => live.frames.some((frame) => frame.type === 'tick' && frame.symbol === 'BTC/USDT'));
        },
        Boolean,
      );
    } finally {
      reads.mockRestore();
      stopCounting();
      await client.close();
    }
    await until(() => server.services.events.subscriptionsOf(user.user.id), (count) => count === 0);
  });
});
