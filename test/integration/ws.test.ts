// The WebSocket channels from outside: /ws/equity/orders (hello, then the user's order events)
// and /ws/live (trades), their close codes, resumption with last_event_id, the per-user cap,
// heartbeat, the send bound, and that no frame ever reaches another user.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZHelloFrame, ZOrderEventFrame, ZTickFrame, ZTradeFrame } from '../../contracts/events.ts';
import { manualClock } from '../../server/clock.ts';
import { auditEvents } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { capturedLogger } from '../support/logs.ts';
import { SAFETY_NET_MS } from '../support/wait.ts';
import { connect, liveSubscribed, wsUrl, type TestSocket } from '../support/ws.ts';

let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;
/** The heartbeat's rounds run when the test moves this clock (heartbeatRound), never by themselves. */
const beat = manualClock();

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WS_MAX_CONNECTIONS_PER_USER: '3', RATE_LIMIT_ORDERS_PER_MIN: '1000' }, undefined, { heartbeatClock: beat });
  admin = await newUser(server, { role: 'admin', prefix: 'ws_admin' });
  const price = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } });
  expect(price.status, price.text).toBe(200);
});
afterAll(() => server.stop());

const sockets: TestSocket[] = [];
const open = (path: string, query: Record<string, string | undefined>, options?: { autoPong?: boolean }) => {
  const socket = connect(wsUrl(server, path, query), options);
  sockets.push(socket);
  return socket;
};
afterAll(() => {
  for (const socket of sockets) socket.ws.terminate();
});

const trader = async (prefix: string, withKey = true) => {
  const user = await newUser(server, { prefix });
  if (withKey) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `ws-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  return user;
};
const orders = (user: FactoryUser, query: Record<string, string> = {}) => open('/ws/equity/orders', { token: user.tokens.access_token, ...query });
const buy = (user: FactoryUser, clientOrderId: string) =>
  server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: clientOrderId } });
const ofOrder = (clientOrderId: string, eventType: string) => (frame: Record<string, any>) => frame.client_order_id === clientOrderId && frame.event_type === eventType;

describe('/ws/equity/orders', () => {
  it('sends hello first, then the order events of an order placed over REST, each with every documented field and already audited', async () => {
    const user = await trader('ws_flow');
    const socket = orders(user);
    const hello = await socket.next();
    expect(ZHelloFrame.parse(hello)).toEqual({ type: 'hello', asset_classes: ['crypto'], user_id: user.user.id });
    const placed = await buy(user, 'ws-flow-1');
    expect(placed.status, placed.text).toBe(201);
    const fill = await socket.next(ofOrder('ws-flow-1', 'fill'));
    const events = socket.frames.slice(1);
    expect(events.map((frame) => frame.event_type)).toEqual(['placed', 'accepted', 'fill']);
    for (const frame of events) ZOrderEventFrame.strict().parse(frame);
    // Placed is written with the broker's answer (DESIGN §6): every frame carries the broker's id.
    expect(events.map((frame) => frame.broker_order_id)).toEqual([placed.body.broker_order_id, placed.body.broker_order_id, placed.body.broker_order_id]);
    expect(fill).toMatchObject({ type: 'order_event', asset_class: 'crypto', broker: 'simulator', broker_order_id: placed.body.broker_order_id, symbol: 'BTC/USDT', status: 'filled', filled_qty: 0.01 });
    expect(fill.avg_fill_price).toBeGreaterThan(0);
    const ids = events.map((frame) => Number(frame.event_id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Every event was in the audit log before it was sent: placed, accepted, fill.
    const audited = (await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id)))).map((row) => row.action);
    expect(audited).toEqual(expect.arrayContaining(['order.placed', 'order.accepted', 'order.fill']));
  });

  it('says asset_classes [] to a user without a key', async () => {
    const user = await trader('ws_nokey', false);
    expect(await orders(user).next()).toEqual({ type: 'hello', asset_classes: [], user_id: user.user.id });
  });

  it("never sends one user's events to another", async () => {
    const [alice, bob] = [await trader('ws_alice'), await trader('ws_bob')];
    const aliceSocket = orders(alice);
    const bobSocket = orders(bob);
    await aliceSocket.next();
    await bobSocket.next();
    expect((await buy(alice, 'ws-alice-1')).status).toBe(201);
    expect((await buy(bob, 'ws-bob-1')).status).toBe(201);
    await aliceSocket.next(ofOrder('ws-alice-1', 'fill'));
    await bobSocket.next(ofOrder('ws-bob-1', 'fill'));
    expect(aliceSocket.frames.slice(1).every((frame) => frame.client_order_id === 'ws-alice-1')).toBe(true);
    expect(bobSocket.frames.slice(1).every((frame) => frame.client_order_id === 'ws-bob-1')).toBe(true);
  });

  it('resumes after last_event_id: a reconnecting client gets what it missed, once, then the live stream', async () => {
    const user = await trader('ws_resume');
    const first = orders(user);
    await first.next();
    expect((await buy(user, 'ws-resume-1')).status).toBe(201);
    const placed = await first.next(ofOrder('ws-resume-1', 'placed'));
    await first.next(ofOrder('ws-resume-1', 'fill'));
    await first.close();
    // Placed while the client was away.
    expect((await buy(user, 'ws-resume-2')).status).toBe(201);
    const second = orders(user, { last_event_id: placed.event_id });
    expect((await second.next()).type).toBe('hello');
    await second.next(ofOrder('ws-resume-2', 'fill'));
    expect((await buy(user, 'ws-resume-3')).status).toBe(201);
    await second.next(ofOrder('ws-resume-3', 'fill'));
    const seen = second.frames.slice(1).map((frame) => `${frame.client_order_id}:${frame.event_type}`);
    expect(seen).toEqual(['ws-resume-1:accepted', 'ws-resume-1:fill', 'ws-resume-2:placed', 'ws-resume-2:accepted', 'ws-resume-2:fill', 'ws-resume-3:placed', 'ws-resume-3:accepted', 'ws-resume-3:fill']);
  });

  it('closes 1008 for a malformed last_event_id', async () => {
    const user = await trader('ws_badresume', false);
    expect(await orders(user, { last_event_id: 'abc' }).closed).toEqual({ code: 1008, reason: 'Invalid last_event_id' });
  });
});

describe('who may connect', () => {
  it('closes 4001 "Missing token" without a token and "Invalid token" for garbage, a refresh token and a deactivated user', async () => {
    expect(await open('/ws/equity/orders', {}).closed).toEqual({ code: 4001, reason: 'Missing token' });
    expect(await open('/ws/live', {}).closed).toEqual({ code: 4001, reason: 'Missing token' });
    expect(await open('/ws/equity/orders', { token: 'garbage' }).closed).toEqual({ code: 4001, reason: 'Invalid token' });
    const user = await trader('ws_refresh', false);
    expect(await open('/ws/live', { token: user.tokens.refresh_token }).closed).toEqual({ code: 4001, reason: 'Invalid token' });
    const gone = await newUser(server, { prefix: 'ws_inactive', active: false });
    expect(await open('/ws/equity/orders', { token: gone.tokens.access_token }).closed).toEqual({ code: 4001, reason: 'Invalid token' });
  });

  it('disconnects (4001) every connection of a user who is deactivated or logs out everywhere', async () => {
    const user = await trader('ws_deact', false);
    const both = [orders(user), open('/ws/live', { token: user.tokens.access_token })];
    await both[0]!.next();
    const res = await server.http('POST', `/api/admin/users/${user.user.id}/deactivate`, { token: admin.tokens.access_token });
    expect(res.status, res.text).toBe(200);
    for (const socket of both) expect(await socket.closed).toEqual({ code: 4001, reason: 'Invalid token' });

    const other = await trader('ws_logoutall', false);
    const socket = orders(other);
    await socket.next();
    expect((await server.http('POST', '/api/auth/logout-all', { token: other.tokens.access_token })).status).toBe(204);
    expect(await socket.closed).toEqual({ code: 4001, reason: 'Invalid token' });
  });

  it("closes 4001 for an expired token, and closes an open connection (4001) once its token expires; the user's feed stops with its last connection", async () => {
    // One clock for the service and its heartbeat: moving it past the token's expiry runs a round.
    const clock = manualClock();
    const timed = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock, heartbeatClock: clock });
    try {
      const user = await newUser(timed, { prefix: 'ws_expiry' });
      const socket = connect(wsUrl(timed, '/ws/equity/orders', { token: user.tokens.access_token }));
      sockets.push(socket);
      expect((await socket.next()).type).toBe('hello');
      expect(timed.services.events.subscriptionsOf(user.user.id)).toBe(1);
      clock.advance(31 * 60_000);
      // The next heartbeat round finds the token expired.
      expect(await socket.closed).toEqual({ code: 4001, reason: 'Invalid token' });
      await waitFor(() => timed.services.events.subscriptionsOf(user.user.id) === 0);
      const late = connect(wsUrl(timed, '/ws/equity/orders', { token: user.tokens.access_token }));
      sockets.push(late);
      expect(await late.closed).toEqual({ code: 4001, reason: 'Invalid token' });
    } finally {
      await timed.stop();
    }
  });

  it('never writes the token of a connection to the log, whatever happens to the connection', async () => {
    const logs = capturedLogger('debug');
    const logged = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { logger: logs.logger });
    const tokens: string[] = [];
    try {
      const user = await newUser(logged, { prefix: 'ws_logs' });
      tokens.push(user.tokens.access_token, user.tokens.refresh_token);
      const good = connect(wsUrl(logged, '/ws/equity/orders', { token: user.tokens.access_token }));
      sockets.push(good);
      expect((await good.next()).type).toBe('hello');
      const refresh = connect(wsUrl(logged, '/ws/live', { token: user.tokens.refresh_token }));
      sockets.push(refresh);
      expect((await refresh.closed).code).toBe(4001);
      await good.close();
    } finally {
      await logged.stop();
    }
    expect(logs.lines.length).toBeGreaterThan(0);
    // Neither token, nor its signature alone, appears anywhere in what was logged.
    for (const token of tokens) {
      expect(logs.text()).not.toContain(token);
      expect(logs.text()).not.toContain(token.split('.')[2]!);
    }
  });

  it('refuses more than WS_MAX_CONNECTIONS_PER_USER connections of one user with 1008', async () => {
    const user = await trader('ws_cap', false);
    const three = [orders(user), orders(user), open('/ws/live', { token: user.tokens.access_token })];
    await three[0]!.next();
    await three[1]!.next();
    await waitOpen(three[2]!);
    // /ws/live sends no hello: its socket opens before its token is checked and it is counted.
    await waitFor(() => countOf(user) === 3);
    expect(await orders(user).closed).toEqual({ code: 1008, reason: 'Too many connections' });
    // Another user is not affected, and a closed slot is free again.
    const other = await trader('ws_cap_other', false);
    expect((await orders(other).next()).type).toBe('hello');
    await three[0]!.close();
    await waitFor(() => countOf(user) === 2);
    expect((await orders(user).next()).type).toBe('hello');
  });

  it('closes every channel with 1013 on a halt and refuses new ones until it is lifted', async () => {
    const user = await trader('ws_halt', false);
    const socket = orders(user);
    await socket.next();
    const halt = (halted: boolean) => server.http('POST', '/api/admin/halt', { token: admin.tokens.access_token, body: { halted } });
    try {
      expect((await halt(true)).status).toBe(200);
      expect(await socket.closed).toEqual({ code: 1013, reason: 'Service halted' });
      expect(await orders(user).closed).toEqual({ code: 1013, reason: 'Service halted' });
    } finally {
      expect((await halt(false)).status).toBe(200);
    }
    expect((await orders(user).next()).type).toBe('hello');
  });
});

describe('/ws/live', () => {
  it('sends no hello, ignores client text, and sends a trade for each fill', async () => {
    const user = await trader('ws_live');
    const socket = open('/ws/live', { token: user.tokens.access_token });
    await waitOpen(socket);
    await liveSubscribed(server, user.user.id);
    socket.ws.send('keep-alive');
    socket.ws.send(JSON.stringify({ type: 'anything' }));
    expect((await buy(user, 'ws-live-1')).status).toBe(201);
    const trade = await socket.next();
    expect(ZTradeFrame.strict().parse(trade)).toMatchObject({ type: 'trade', symbol: 'BTC/USDT', asset_class: 'crypto', side: 'buy', amount: 0.01 });
    expect(trade.price).toBeGreaterThan(0);
    expect(trade.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(socket.frames).toHaveLength(1);
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
  });

  it('sends ticks of the instruments the user holds, and none of others', async () => {
    const user = await trader('ws_ticks');
    const socket = open('/ws/live', { token: user.tokens.access_token });
    await waitOpen(socket);
    await liveSubscribed(server, user.user.id);
    expect((await buy(user, 'ws-ticks-1')).status).toBe(201);
    await socket.next((frame) => frame.type === 'trade');
    const setPrice = (symbol: string, price: number) => server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol, price } });
    // Not held: no tick. Held: a tick, after which the first must have arrived had it been sent.
    expect((await setPrice('ETH/USDT', 3000)).status).toBe(200);
    expect((await setPrice('BTC/USDT', 50001)).status).toBe(200);
    const tick = await socket.next((frame) => frame.type === 'tick');
    expect(ZTickFrame.strict().parse(tick)).toEqual({ type: 'tick', symbol: 'BTC/USDT', asset_class: 'crypto', last: 50001, ts: expect.any(String) });
    expect(socket.frames.filter((frame) => frame.type === 'tick').map((frame) => frame.symbol)).toEqual(['BTC/USDT']);
  });
});

describe('keeping connections healthy', () => {
  it('drops a client that stops answering pings', async () => {
    const user = await trader('ws_dead', false);
    const socket = open('/ws/equity/orders', { token: user.tokens.access_token }, { autoPong: false });
    await socket.next();
    // Each round pings; the client leaves two pings unanswered, and the third round drops it.
    for (let round = 0; round < 2; round++) {
      const pinged = new Promise((resolve) => socket.ws.once('ping', resolve));
      heartbeatRound();
      await pinged;
    }
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    heartbeatRound();
    expect((await socket.closed).code).toBe(1006);
    await waitFor(() => countOf(user) === 0);
  });

  it('closes a client that stops reading with 1013 instead of buffering without bound', async () => {
    const user = await trader('ws_slow', false);
    const socket = orders(user);
    await socket.next();
    // The client stops reading: its kernel buffers fill, then the server's send buffer.
    (socket.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const before = await slowCloses();
    const frame = { type: 'order_event', event_type: 'open', padding: 'x'.repeat(2_000) };
    for (let round = 0; round < 20 && (await slowCloses()) === before; round++) {
      await server.services.db.transaction((tx) => server.services.events.append(tx, Array.from({ length: 500 }, () => ({ userId: user.user.id, channel: 'orders' as const, frame, at: new Date() }))));
      await server.services.events.poll();
    }
    expect(await slowCloses()).toBe(before + 1);
    // Its close frame waits behind what it does not read, and it cannot answer a ping either:
    // the heartbeat drops it at its third round.
    for (let round = 0; round < 3; round++) heartbeatRound();
    await waitFor(() => countOf(user) === 0);
  });

  it('counts open connections in /metrics as ws_connections', async () => {
    const user = await trader('ws_metrics', false);
    const socket = orders(user);
    await socket.next();
    const metrics = await server.http('GET', '/metrics');
    expect(metrics.text).toMatch(/ws_connections\{channel="orders"\} [1-9]/);
  });
});

/** Runs one round of the main server's heartbeat (pings, and the drop of a client that left two unanswered). */
const heartbeatRound = () => beat.advance(server.config.WS_HEARTBEAT_INTERVAL_SEC * 1000);

/** Sockets of the orders channel closed as too slow (1013, send buffer full) so far. */
const slowCloses = async () => {
  const text = await server.services.metrics.registry.getSingleMetricAsString('ws_closed_total');
  return Number(/ws_closed_total\{channel="orders",code="1013"\} (\d+)/.exec(text)?.[1] ?? 0);
};

/** Connections of a user open on the server right now. */
const countOf = (user: FactoryUser) => server.channels.connectionsOf(user.user.id);

const waitOpen = (socket: TestSocket) =>
  new Promise<void>((resolve, reject) => {
    if (socket.ws.readyState === socket.ws.OPEN) return resolve();
    socket.ws.once('open', () => resolve());
    socket.ws.once('close', () => reject(new Error('closed before open')));
  });

const waitFor = async (done: () => boolean, ms = SAFETY_NET_MS) => {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
