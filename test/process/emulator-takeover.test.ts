// The order emulator's triggers across a crash (DESIGN §6 "Advanced orders"): two service
// processes on one PostgreSQL in real mode against the fake KIS on 127.0.0.1 (which holds no
// trailing stops; every setPrice is a trade on its quote stream). The instance holding the
// account's ingestion lease watches the triggers and is killed with SIGKILL; the other takes the
// lease over once it expires and resumes them from their rows: each keeps its saved mark (at most
// the last second of quotes lost), fires once at its stop, and its order ends filled. PostgreSQL
// only: on PGlite one DATA_DIR has one process.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { createTestDatabase } from '../support/server.ts';
import { callJson, listeningAt, serverProcesses, type ServerProcess } from '../support/server-process.ts';
import { waitFor } from '../support/wait.ts';

/** How long any one wait may take before the test fails (a deadline, not a sleep): a takeover waits out the lease (15 s) and a round (5 s). */
const DEADLINE_MS = 90_000;
const TIMEOUT = { timeout: 300_000 };
const SYMBOL = '005930';

const { start: startChild, stopAll } = serverProcesses('emutakeover');
afterAll(stopAll);

const listening = (child: ServerProcess) => listeningAt(child, DEADLINE_MS);
const call = (base: string, method: string, urlPath: string, opts: { body?: unknown; token?: string } = {}) => callJson(base, method, urlPath, { ...opts, deadlineMs: DEADLINE_MS });

interface TriggerRow {
  client_order_id: string;
  status: string;
  hwm: string;
  stop_price: string;
  child_client_order_id: string | null;
}

describe.skipIf(!process.env.DATABASE_URL)('emulated trailing stops when the instance watching them is killed (SIGKILL)', TIMEOUT, () => {
  let kis: FakeKis | undefined;

  afterAll(async () => {
    await kis?.close();
  });

  it('the other instance takes the account’s lease over and resumes each trigger from its saved mark: each fires once, one market order each, and its order ends filled', async () => {
    const kisKey = { appKey: `PSTAKE${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000003', productCode: '01' };
    kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { [SYMBOL]: '96500' } });
    const database = await createTestDatabase();
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    const shared = {
      DATABASE_URL: database.url,
      // Instances share their secrets through settings (a generated secret is one DATA_DIR's own).
      AUTH_SECRET_KEY: 'emulator-takeover-secret-key-0123456789abcdef',
      ENCRYPTION_SALT: 'emulator-takeover-salt-0123456789',
      BROKER_MODE: 'real',
      BROKER_BASE_URLS: `kr_broker:paper=${kis.url}`,
      BROKER_KR_POLL_INTERVAL_MS: '200',
      BROKER_KR_REQUESTS_PER_SEC: '50',
      RISK_MARKET_HOURS: 'ignore',
      SIM_TICK_INTERVAL_MS: '0',
    };
    const a = startChild(shared);
    let b: ServerProcess | undefined;
    try {
      const baseA = await listening(a);
      const registered = await call(baseA, 'POST', '/api/auth/register', { body: { username: 'takeover_trader', email: 'takeover_trader@example.com', password: 'takeover-trader-password' } });
      expect(registered.status, registered.text).toBe(201);
      const userId = registered.body.id as number;
      const login = await call(baseA, 'POST', '/api/auth/login', { body: { username: 'takeover_trader', password: 'takeover-trader-password' } });
      expect(login.status, login.text).toBe(200);
      const token = login.body.access_token as string;
      const key = await call(baseA, 'POST', '/api/exchange-keys', {
        token,
        body: { asset_class: 'kr_equity', exchange: 'kr_broker', paper_mode: true, account_no: `${kisKey.accountNo}-${kisKey.productCode}`, account_product_code: kisKey.productCode, api_key: kisKey.appKey, api_secret: kisKey.appSecret, base_url: kis.url },
      });
      expect(key.status, key.text).toBe(201);
      const lease = `broker-events:key:${String(key.body.id)}`;
      /** The pid of the instance holding the account's ingestion lease (its holder id is host:pid:random). */
      const leaseHolderPid = async () => {
        const [row] = await sql<{ holder: string }[]>`select holder from leases where name = ${lease}`;
        return row ? Number(row.holder.split(':').at(-2)) : undefined;
      };
      const triggers = () => sql<TriggerRow[]>`select client_order_id, status, hwm::text, stop_price::text, child_client_order_id from order_triggers where user_id = ${userId} order by client_order_id`;
      const orderOf = async (clientOrderId: string) => (await sql<{ status: string; filled_qty: string; avg_fill_price: string | null; metadata: Record<string, unknown> }[]>`select status, filled_qty::text, avg_fill_price::text, metadata from orders where user_id = ${userId} and client_order_id = ${clientOrderId}`)[0];
      const triggeredEvents = async (clientOrderId: string) =>
        (await sql<{ frame: { client_order_id: string; event_type: string } }[]>`select frame from outbox_events where user_id = ${userId} and channel = 'orders' order by id`).filter(
          (row) => row.frame.client_order_id === clientOrderId && row.frame.event_type === 'triggered',
        ).length;
      const marketOrdersAtKis = () => kis!.requests.filter((request) => request.path === KIS_PATHS.orderCash).length;
      const place = (body: Record<string, unknown>) => call(baseA, 'POST', '/api/equity/orders', { token, body: { asset_class: 'kr_equity', symbol: SYMBOL, ...body } });

      // A position to protect, then two trailing sells on it, held by the emulator (no broker call).
      const bought = await place({ side: 'buy', qty: 5, order_type: 'market', client_order_id: 'take-buy' });
      expect(bought.status, bought.text).toBe(201);
      await waitFor(() => orderOf('take-buy'), (row) => row?.status === 'filled', DEADLINE_MS);
      const ordersBefore = marketOrdersAtKis();
      const percent = await place({ side: 'sell', qty: 2, order_type: 'trailing_stop', trail_percent: 5, time_in_force: 'gtc', client_order_id: 'take-pct' });
      const price = await place({ side: 'sell', qty: 1, order_type: 'trailing_stop', trail_price: 3000, time_in_force: 'gtc', client_order_id: 'take-px' });
      expect([percent.status, price.status], `${percent.text}\n${price.text}`).toEqual([201, 201]);
      expect(percent.body).toMatchObject({ stop_price: 91600, metadata: { emulated: true, hwm: 96500 } });
      expect(price.body).toMatchObject({ stop_price: 93500, metadata: { emulated: true, hwm: 96500 } });

      // A holds the account (it was the only instance), and watches the symbol on the quote stream.
      expect(await waitFor(leaseHolderPid, (pid) => pid === a.proc.pid, DEADLINE_MS)).toBe(a.proc.pid);
      await waitFor(() => Promise.resolve(kis!.quotes.sessions()), (sessions) => sessions.some((symbols) => symbols.includes(SYMBOL)), DEADLINE_MS);
      b = startChild({ ...shared, WORKERS_IN_PROCESS: 'false' });
      const baseB = await listening(b);

      // A new high, saved by A (within a second), then a higher one A may not have saved: A dies.
      kis.setPrice(SYMBOL, '100000');
      const saved = await waitFor(triggers, (rows) => rows.length === 2 && rows.every((row) => row.hwm === '100000'), DEADLINE_MS);
      expect(saved.map((row) => [row.client_order_id, row.status, row.stop_price])).toEqual([
        ['take-pct', 'working', '95000'],
        ['take-px', 'working', '97000'],
      ]);
      kis.setPrice(SYMBOL, '101000');
      process.kill(a.proc.pid!, 'SIGKILL');
      await a.closed;
      expect(marketOrdersAtKis()).toBe(ordersBefore);

      // What A left: both working, each mark the one saved or the last second's newer high, its stop from that mark.
      const left = await triggers();
      const stopOf = { 'take-pct': { '100000': '95000', '101000': '95900' }, 'take-px': { '100000': '97000', '101000': '98000' } } as const;
      for (const row of left) {
        expect(row.status).toBe('working');
        expect(['100000', '101000']).toContain(row.hwm);
        expect(row.stop_price).toBe(stopOf[row.client_order_id as keyof typeof stopOf][row.hwm as '100000' | '101000']);
      }

      // B takes the lease once A's has run out, and watches the symbol again.
      expect(await waitFor(leaseHolderPid, (pid) => pid === b!.proc.pid, DEADLINE_MS)).toBe(b.proc.pid);
      await waitFor(() => Promise.resolve(kis!.quotes.sessions()), (sessions) => sessions.length === 1 && sessions[0]!.includes(SYMBOL), DEADLINE_MS);
      // B reads the orders with the marks A saved.
      const read = await call(baseB, 'GET', '/api/equity/orders?asset_class=kr_equity&size=100', { token });
      expect(read.status, read.text).toBe(200);
      for (const row of left) {
        expect(read.body.items.find((item: { client_order_id: string }) => item.client_order_id === row.client_order_id)).toMatchObject({
          status: 'open',
          stop_price: Number(row.stop_price),
          metadata: expect.objectContaining({ emulated: true, hwm: Number(row.hwm) }),
        });
      }

      // A price under the marks but over both stops moves nothing; at the tighter stop, that trigger fires.
      const [pct, px] = [left.find((row) => row.client_order_id === 'take-pct')!, left.find((row) => row.client_order_id === 'take-px')!];
      kis.setPrice(SYMBOL, '99000');
      kis.setPrice(SYMBOL, px.stop_price);
      const pxFilled = await waitFor(() => orderOf('take-px'), (row) => row?.status === 'filled', DEADLINE_MS);
      expect(pxFilled).toMatchObject({ filled_qty: '1', avg_fill_price: px.stop_price, metadata: expect.objectContaining({ child_client_order_id: 'take-px.tr' }) });
      // The other kept A's mark: the fall to the first stop was no new mark for it.
      expect((await triggers()).find((row) => row.client_order_id === 'take-pct')).toMatchObject({ status: 'working', hwm: pct.hwm, stop_price: pct.stop_price });
      kis.setPrice(SYMBOL, pct.stop_price);
      const pctFilled = await waitFor(() => orderOf('take-pct'), (row) => row?.status === 'filled', DEADLINE_MS);
      expect(pctFilled).toMatchObject({ filled_qty: '2', avg_fill_price: pct.stop_price, metadata: expect.objectContaining({ child_client_order_id: 'take-pct.tr' }) });

      // Each fired once: one market order at KIS and one `triggered` event per trigger, nothing lost.
      expect(marketOrdersAtKis()).toBe(ordersBefore + 2);
      expect(await triggeredEvents('take-px')).toBe(1);
      expect(await triggeredEvents('take-pct')).toBe(1);
      expect((await triggers()).map((row) => [row.client_order_id, row.status, row.child_client_order_id])).toEqual([
        ['take-pct', 'triggered', 'take-pct.tr'],
        ['take-px', 'triggered', 'take-px.tr'],
      ]);
      const positions = await waitFor(
        () => call(baseB, 'GET', '/api/equity/positions?asset_class=kr_equity', { token }),
        (res) => res.status === 200 && res.body.items.some((item: { symbol: string; qty: number }) => item.symbol === SYMBOL && item.qty === 2),
        DEADLINE_MS,
      );
      expect(positions.body.items).toEqual([expect.objectContaining({ symbol: SYMBOL, qty: 2 })]);

      process.kill(b.proc.pid!, 'SIGTERM');
      expect(await b.closed).toBe(0);
    } finally {
      for (const child of [a, b]) if (child && child.exit === undefined) process.kill(child.proc.pid!, 'SIGTERM');
      await Promise.all([a.closed, b?.closed]);
      await sql.end();
      await database.drop();
    }
  });
});
