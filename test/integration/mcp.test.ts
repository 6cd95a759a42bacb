// The MCP server (DESIGN §6 "Integrations") through the SDK's own client: /mcp over streamable
// HTTP with a personal API key, its tools bound by the key's scopes and run through the same
// procedures as REST (an order placed by a tool is the REST route's order; a live order needs the
// live scope; a revoked key is 401), and `npm run mcp`'s stdio entry as a child process relaying
// to this service.
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZApiKeyCreated, type TApiKeyScope } from '../../contracts/auth.ts';
import { manualClock } from '../../server/clock.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-10T15:00:00.000Z');
const STDIO_ENTRY = path.join(import.meta.dirname, '../../server/mcp-stdio.ts');
const READ_TOOLS = ['get_account', 'get_positions', 'list_orders', 'get_order', 'list_strategies', 'get_backtest', 'get_crypto_backtest', 'get_analysis', 'get_performance'];
const order = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market' };

let server: TestServer;
const clients: Client[] = [];
let keyCount = 0;

/** Weekdays of a gently rising series ending 2026-03-06, enough for a backtest and an analysis. */
const barsOf = (count: number) => {
  const dates: string[] = [];
  for (const day = new Date('2026-03-06T00:00:00Z'); dates.length < count; day.setUTCDate(day.getUTCDate() - 1)) {
    if (day.getUTCDay() !== 0 && day.getUTCDay() !== 6) dates.unshift(day.toISOString().slice(0, 10));
  }
  return dates.map((date, index) => {
    const close = 100 + index * 0.2 + Math.sin(index / 5) * 2;
    return { date, open: (close - 0.5).toFixed(2), high: (close + 1).toFixed(2), low: (close - 1).toFixed(2), close: close.toFixed(2), volume: String(1_000_000 + index) };
  });
};

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', FEATURE_EQUITY_LIVE: 'true', ALLOW_LIVE: '1' }, undefined, { clock });
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  await upsertBars(server.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars: barsOf(300), source: 'test', at: clock.now() });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await server.stop();
});

/** A user with a crypto exchange key, so its paper orders have a broker. */
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `mcp-test-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const newKey = async (user: FactoryUser, scopes: TApiKeyScope[]) => {
  const res = await server.http('POST', '/api/auth/api-keys', { token: user.tokens.access_token, body: { name: scopes.join('+'), scopes } });
  expect(res.status, res.text).toBe(201);
  return ZApiKeyCreated.parse(res.body);
};

/** An MCP session with the service's /mcp, as an assistant opens it. */
const session = async (key: string) => {
  const client = new Client({ name: 'mcp-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
};
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

describe('/mcp tools', () => {
  it('are listed by the key’s scopes: a read key sees only read tools, and each tool’s arguments are its contract’s, described', async () => {
    const user = await trader('mcp_list');
    const reader = await session((await newKey(user, ['read'])).key);
    expect(await toolNames(reader)).toEqual([...READ_TOOLS].sort());
    for (const tool of (await reader.listTools()).tools) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);

    const everything = await session((await newKey(user, ['read', 'trade', 'live', 'backtest', 'analysis'])).key);
    const listed = (await everything.listTools()).tools;
    expect(listed.map((tool) => tool.name).sort()).toEqual([...READ_TOOLS, 'place_order', 'cancel_order', 'run_backtest', 'run_crypto_backtest', 'request_analysis'].sort());
    const place = listed.find((tool) => tool.name === 'place_order')!;
    expect(place.description).toContain('trade');
    expect(place.inputSchema.required).toEqual(expect.arrayContaining(['asset_class', 'symbol', 'side', 'qty', 'order_type']));
    expect(place.inputSchema.properties?.live_mode).toMatchObject({ type: 'boolean', default: false, description: expect.any(String) });
    const getOrder = listed.find((tool) => tool.name === 'get_order')!;
    expect(getOrder.inputSchema.properties?.broker_order_id).toMatchObject({ description: expect.stringContaining('broker') });
  });

  it('read the account and positions as REST does, place a paper order with a trade key (then visible on REST), and refuse what the key’s scopes do not reach', async () => {
    const user = await trader('mcp_trade');
    const reader = await session((await newKey(user, ['read'])).key);
    const tradeKey = await newKey(user, ['read', 'trade']);
    const tradingSession = await session(tradeKey.key);

    const account = await call(reader, 'get_account', { asset_class: 'crypto' });
    expect(account.isError, textOf(account)).toBeFalsy();
    const rest = await server.http('GET', '/api/equity/account?asset_class=crypto', { token: user.tokens.access_token });
    expect(account.structuredContent).toMatchObject({ cash: rest.body.cash, equity: rest.body.equity, buying_power: rest.body.buying_power, paper: true });
    expect(JSON.parse(textOf(account))).toEqual(account.structuredContent);

    // A tool outside the key's scopes is not listed, and a call of it is refused by the route's own gate.
    const refused = await call(reader, 'place_order', order);
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toEqual({ code: 'FORBIDDEN', status: 403, message: 'This API key lacks the trade scope' });
    expect(textOf(refused)).toContain('lacks the trade scope');

    const placed = await call(tradingSession, 'place_order', order);
    expect(placed.isError, textOf(placed)).toBeFalsy();
    const placedOrder = placed.structuredContent as { broker_order_id: string; status: string };
    const viaRest = await server.http('GET', `/api/equity/orders/${placedOrder.broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(viaRest.status, viaRest.text).toBe(200);
    expect(viaRest.body).toMatchObject({ broker_order_id: placedOrder.broker_order_id, symbol: 'BTC/USDT', side: 'buy', qty: 0.01 });
    expect((await call(reader, 'get_order', { broker_order_id: placedOrder.broker_order_id, asset_class: 'crypto' })).structuredContent).toEqual(viaRest.body);
    const listed = (await call(reader, 'list_orders', { asset_class: 'crypto' })).structuredContent as { items: { broker_order_id: string }[]; total: number };
    expect(listed.items.map((item) => item.broker_order_id)).toEqual([placedOrder.broker_order_id]);

    const positions = await call(reader, 'get_positions', { asset_class: 'crypto' });
    const restPositions = await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token });
    expect(positions.structuredContent).toEqual(restPositions.body);
    // A market order fills at once on the simulator: the position is there.
    expect(viaRest.body.status).toBe('filled');
    expect(restPositions.body.items).toEqual([expect.objectContaining({ symbol: 'BTC/USDT', qty: 0.01 })]);

    const performance = await call(reader, 'get_performance', { asset_class: 'crypto' });
    expect(performance.structuredContent).toEqual((await server.http('GET', '/api/equity/performance?asset_class=crypto', { token: user.tokens.access_token })).body);

    // A live order needs the live scope, whatever the account allows.
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    const live = await call(tradingSession, 'place_order', { ...order, live_mode: true });
    expect([live.isError, live.structuredContent]).toEqual([true, { code: 'FORBIDDEN', status: 403, message: 'This API key lacks the live scope' }]);
    const liveSession = await session((await newKey(user, ['trade', 'live'])).key);
    const liveOrder = await call(liveSession, 'place_order', { ...order, live_mode: true });
    expect(liveOrder.isError, textOf(liveOrder)).toBeFalsy();
    const liveOnRest = await server.http('GET', `/api/equity/orders?asset_class=crypto&mode=live`, { token: user.tokens.access_token });
    expect(liveOnRest.body.items.map((item: { broker_order_id: string }) => item.broker_order_id)).toEqual([(liveOrder.structuredContent as { broker_order_id: string }).broker_order_id]);

    // Arguments outside the contract never reach the procedure.
    const invalid = await call(tradingSession, 'place_order', { ...order, qty: -1 });
    expect([invalid.isError, textOf(invalid)]).toEqual([true, expect.stringMatching(/^MCP error -32602: Input validation error: .*qty/s)]);
    // A procedure's refusal comes with its code, as on REST.
    const missing = await call(tradingSession, 'cancel_order', { broker_order_id: 'no-such-order', asset_class: 'crypto' });
    expect([missing.isError, missing.structuredContent]).toEqual([true, expect.objectContaining({ code: 'ORDER_NOT_FOUND', status: 404 })]);
  });

  it('run a backtest and read it back, and request an analysis and read its report, each under its own scope', async () => {
    const user = await newUser(server, { prefix: 'mcp_research' });
    const reader = await session((await newKey(user, ['read'])).key);
    const researcher = await session((await newKey(user, ['backtest', 'analysis'])).key);
    const strategies = (await call(reader, 'list_strategies')).structuredContent as { items: { name: string }[] };
    expect(strategies.items.map((item) => item.name)).toContain('buy_and_hold');

    const request = { symbol: 'AAPL', asset_class: 'us_equity', strategy_name: 'buy_and_hold', start_date: '2025-01-01', end_date: '2026-03-06' };
    expect((await call(reader, 'run_backtest', request)).structuredContent).toMatchObject({ code: 'FORBIDDEN', message: 'This API key lacks the backtest scope' });
    const ran = await call(researcher, 'run_backtest', request);
    expect(ran.isError, textOf(ran)).toBeFalsy();
    const result = ran.structuredContent as { result_id: string; trades: unknown[] };
    expect(result.trades.length).toBeGreaterThan(0);
    expect((await call(reader, 'get_backtest', { result_id: result.result_id })).structuredContent).toEqual(result);

    const asked = await call(researcher, 'request_analysis', { symbol: 'aapl', mode: 'quick', inline: true });
    expect(asked.structuredContent).toEqual({ report_id: expect.any(String), queue_id: null, status: 'done' });
    const report = await call(reader, 'get_analysis', { report_id: (asked.structuredContent as { report_id: string }).report_id });
    expect(report.structuredContent).toMatchObject({ symbol: 'AAPL', status: 'done', mode: 'quick' });
    const refused = await call(researcher, 'get_analysis', { report_id: 'x' });
    expect(refused.structuredContent).toMatchObject({ code: 'FORBIDDEN', message: 'This API key lacks the read scope' });
  });
});

describe('/mcp access', () => {
  const rawPost = (headers: Record<string, string>) =>
    fetch(new URL('/mcp', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('is 401 without a key, with an access token or an unknown key, and with a key revoked, even in an open session', async () => {
    const user = await trader('mcp_revoke');
    for (const authorization of [undefined, `Bearer ${user.tokens.access_token}`, 'Bearer tsk_not-a-key']) {
      const res = await rawPost(authorization ? { authorization } : {});
      expect([res.status, res.headers.get('www-authenticate')], authorization).toEqual([401, 'Bearer']);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    }
    const key = await newKey(user, ['read']);
    const open = await session(key.key);
    expect(await toolNames(open)).toContain('get_account');
    expect((await server.http('DELETE', `/api/auth/api-keys/${key.id}`, { token: user.tokens.access_token })).status).toBe(204);
    const refused = await open.listTools().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
    expect((await rawPost({ authorization: `Bearer ${key.key}` })).status).toBe(401);
    const reconnect = await session(key.key).catch((error: unknown) => error);
    expect((reconnect as StreamableHTTPError).code).toBe(401);
  });

  it('is 503 while an operator has halted the service', async () => {
    const user = await newUser(server, { prefix: 'mcp_halt' });
    const admin = await newUser(server, { role: 'admin', prefix: 'mcp_halt_admin' });
    const key = await newKey(user, ['read']);
    const halt = (halted: boolean) => server.http('POST', '/api/admin/halt', { token: admin.tokens.access_token, body: { halted } });
    expect((await halt(true)).status).toBe(200);
    try {
      const res = await rawPost({ authorization: `Bearer ${key.key}` });
      expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([503, 'SERVICE_HALTED']);
    } finally {
      expect((await halt(false)).status).toBe(200);
    }
    expect((await rawPost({ authorization: `Bearer ${key.key}` })).status).toBe(200);
  });

  it('takes POST only (stateless: no stream to open, no session to end), of JSON within the body limit', async () => {
    const res = await fetch(new URL('/mcp', server.url), { headers: { accept: 'text/event-stream' } });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await fetch(new URL('/mcp', server.url), { method: 'DELETE' })).status).toBe(405);

    const user = await newUser(server, { prefix: 'mcp_body' });
    const authorization = `Bearer ${(await newKey(user, ['read'])).key}`;
    const post = (body: string, contentType = 'application/json') =>
      fetch(new URL('/mcp', server.url), { method: 'POST', headers: { authorization, 'content-type': contentType, accept: 'application/json, text/event-stream' }, body });
    const tooLarge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(server.config.BODY_LIMIT_BYTES) } }));
    expect(tooLarge.status).toBe(413);
    expect((await post('{}', 'text/plain')).status).toBe(415);
    const malformed = await post('{"jsonrpc":');
    expect([malformed.status, ((await malformed.json()) as { error: { code: number } }).error.code]).toEqual([400, -32700]);
  });
});

describe('npm run mcp (stdio)', () => {
  it('relays the tools of the key to a running service: lists them and reads the account', async () => {
    const user = await trader('mcp_stdio');
    const key = await newKey(user, ['read']);
    const transport = new StdioClientTransport({ command: process.execPath, args: [STDIO_ENTRY], env: { TRADING_URL: server.url, TRADING_API_KEY: key.key }, stderr: 'pipe' });
    const client = new Client({ name: 'mcp-stdio-test', version: '0' });
    await client.connect(transport);
    clients.push(client);
    expect(await toolNames(client)).toEqual([...READ_TOOLS].sort());
    const account = await call(client, 'get_account', { asset_class: 'crypto' });
    const rest = await server.http('GET', '/api/equity/account?asset_class=crypto', { token: user.tokens.access_token });
    expect(account.structuredContent).toMatchObject({ cash: rest.body.cash, buying_power: rest.body.buying_power, currency: 'USDT' });
    const refused = await call(client, 'place_order', order);
    expect([refused.isError, textOf(refused)]).toEqual([true, 'FORBIDDEN: This API key lacks the trade scope']);
  });

  it('says what is missing and exits without a key', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [STDIO_ENTRY], env: { TRADING_URL: server.url }, stderr: 'pipe' });
    const stderr: Buffer[] = [];
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    const client = new Client({ name: 'mcp-stdio-test', version: '0' });
    await expect(client.connect(transport)).rejects.toThrow();
    expect(Buffer.concat(stderr).toString()).toContain('TRADING_API_KEY');
  });
});
