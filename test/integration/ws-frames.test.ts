// Frames from anyone against every WebSocket endpoint (/ws/equity/orders, /ws/live, /trpc):
// too large, invalid (bad UTF-8, a reserved opcode) or early (written with the upgrade request,
// before the token is checked). Each gets its close code, and the process goes on serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WS_CLOSE } from '../../contracts/events.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { clientFrame, OPCODE, openRawWebSocket, rawWebSocket } from '../support/raw-ws.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const BODY_LIMIT_BYTES = 16_384;
/** The channels' own frame limit (their clients send only keep-alives). */
const CHANNEL_FRAME_LIMIT = 4_096;

let server: TestServer;
let user: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES), WS_MAX_CONNECTIONS_PER_USER: '1000' });
  user = await newUser(server, { prefix: 'wsf' });
});
afterAll(() => server.stop());

const connectionParams = (token: string) => clientFrame(OPCODE.text, JSON.stringify({ method: 'connectionParams', data: { token } }));
const BAD_UTF8 = clientFrame(OPCODE.text, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
const RESERVED_OPCODE = clientFrame(OPCODE.reserved, 'x');
const oversized = (limit: number) => clientFrame(OPCODE.text, 'x'.repeat(limit + 1));

/** Still serving: /health answers, and nobody's connection was left behind. */
const stillServing = async () => {
  expect((await server.http('GET', '/health')).status).toBe(200);
  await waitFor(() => Promise.resolve(server.channels.connectionsOf(user.user.id)), (count) => count === 0);
};

const channelPaths = ['/ws/equity/orders', '/ws/live'] as const;
const tokens = (): [string, string | undefined][] => [
  ['no token', undefined],
  ['a garbage token', 'garbage'],
  ['a valid token', user.tokens.access_token],
];
const withToken = (path: string, token: string | undefined) => (token === undefined ? path : `${path}?token=${encodeURIComponent(token)}`);

describe.each(channelPaths)('%s', (path) => {
  it('closes a frame over 4 KiB sent before the token is checked with 1009 (or the token refusal), whoever sends it', async () => {
    for (const [, token] of tokens()) {
      const outcome = await rawWebSocket(server.url, withToken(path, token), { early: [oversized(CHANNEL_FRAME_LIMIT)] });
      expect(outcome.status).toBe(101);
      // Without a token the refusal is sent before the frame is read; otherwise the frame is read first.
      expect(token === undefined ? [WS_CLOSE.unauthorized] : [WS_CLOSE.tooBig]).toContain(outcome.code);
      await stillServing();
    }
  });

  it('closes a bad UTF-8 text frame with 1007 and a reserved opcode with 1002, sent before or after the token is checked', async () => {
    for (const [, token] of tokens()) {
      const expected = (code: number) => (token === undefined ? WS_CLOSE.unauthorized : code);
      expect((await rawWebSocket(server.url, withToken(path, token), { early: [BAD_UTF8] })).code).toBe(expected(1007));
      expect((await rawWebSocket(server.url, withToken(path, token), { early: [RESERVED_OPCODE] })).code).toBe(expected(1002));
      await stillServing();
    }
    // Once connected (after the hello on the orders channel): the same frames, later.
    const after = path === '/ws/equity/orders' ? { onText: () => [clientFrame(OPCODE.text, 'keep-alive'), BAD_UTF8] } : { later: [clientFrame(OPCODE.text, 'keep-alive'), BAD_UTF8] };
    expect((await rawWebSocket(server.url, withToken(path, user.tokens.access_token), after)).code).toBe(1007);
    await stillServing();
  });

  it('reads an early keep-alive frame as any other: the connection is served', async () => {
    const early = [clientFrame(OPCODE.text, 'keep-alive')];
    if (path === '/ws/equity/orders') {
      const outcome = await rawWebSocket(server.url, withToken(path, user.tokens.access_token), { early, onText: () => [oversized(CHANNEL_FRAME_LIMIT)] });
      expect(JSON.parse(outcome.texts[0]!)).toMatchObject({ type: 'hello', user_id: user.user.id });
      expect(outcome.code).toBe(WS_CLOSE.tooBig);
    } else {
      // No hello: the connection is counted once its token is checked.
      await waitFor(() => Promise.resolve(server.channels.connectionsOf(user.user.id)), (count) => count === 0);
      const raw = openRawWebSocket(server.url, withToken(path, user.tokens.access_token), { early });
      await waitFor(() => Promise.resolve(server.channels.connectionsOf(user.user.id)), (count) => count === 1);
      raw.write(oversized(CHANNEL_FRAME_LIMIT));
      expect((await raw.outcome).code).toBe(WS_CLOSE.tooBig);
    }
    await stillServing();
  });
});

describe('/trpc', () => {
  const path = '/trpc?connectionParams=1';

  it('closes a frame over BODY_LIMIT_BYTES with 1009, before or after the connection params', async () => {
    expect((await rawWebSocket(server.url, path, { early: [oversized(BODY_LIMIT_BYTES)] })).code).toBe(WS_CLOSE.tooBig);
    expect((await rawWebSocket(server.url, path, { early: [connectionParams('garbage'), oversized(BODY_LIMIT_BYTES)] })).code).toBe(WS_CLOSE.tooBig);
    expect((await rawWebSocket(server.url, path, { early: [connectionParams(user.tokens.access_token), oversized(BODY_LIMIT_BYTES)] })).code).toBe(WS_CLOSE.tooBig);
    await stillServing();
  });

  it('closes a bad UTF-8 text frame with 1007 and a reserved opcode with 1002', async () => {
    expect((await rawWebSocket(server.url, path, { early: [BAD_UTF8] })).code).toBe(1007);
    expect((await rawWebSocket(server.url, path, { early: [RESERVED_OPCODE] })).code).toBe(1002);
    expect((await rawWebSocket(server.url, path, { early: [connectionParams(user.tokens.access_token), BAD_UTF8] })).code).toBe(1007);
    await stillServing();
  });

  it('closes malformed connection params with 1008, after an error the client can read', async () => {
    const outcome = await rawWebSocket(server.url, path, { early: [clientFrame(OPCODE.text, '{not json')] });
    expect(outcome.code).toBe(WS_CLOSE.policy);
    expect(JSON.parse(outcome.texts[0]!)).toMatchObject({ id: null, error: { json: { data: { domainCode: 'VALIDATION_ERROR' } } } });
    await stillServing();
  });

  it('serves calls written with the upgrade, before the connection params were read', async () => {
    const subscribe = clientFrame(OPCODE.text, JSON.stringify({ id: 1, method: 'subscription', params: { path: 'events.orders', input: {} } }));
    const outcome = await rawWebSocket(server.url, path, {
      early: [connectionParams(user.tokens.access_token), subscribe],
      onText: (text) => (JSON.parse(text).result?.type === 'data' ? [oversized(BODY_LIMIT_BYTES)] : undefined),
    });
    const replies = outcome.texts.map((text) => JSON.parse(text));
    expect(replies[0]).toEqual({ id: 1, result: { type: 'started' } });
    expect(replies[1]).toMatchObject({ id: 1, result: { type: 'data', data: { json: { type: 'hello', user_id: user.user.id } } } });
    expect(outcome.code).toBe(WS_CLOSE.tooBig);
    await stillServing();
  });
});
