// The durable-order floor of test/bench/orders.ts: a bare node:http handler on its own postgres.js
// pool that, per order, does in one transaction what a placed and filled order must leave on
// disk: the order row (unique client order id), an audit row, the fill, a second audit row and
// the position upsert. No auth, no gates, no broker, no logging, no metrics: what durability alone
// costs on this Postgres. Its tables are its own (bench_*), created here in the bench's database.
// The user is whoever the request's `x-user-id` header names (where ours reads a bearer token), so
// many users each upsert a position row of their own, as ours' accounts do.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';

/** The user of a request without `x-user-id`: the floor has no users table. */
export const FLOOR_USER_ID = 1;
/** The header naming the user an order is for: its value is a positive integer. */
export const FLOOR_USER_HEADER = 'x-user-id';
/** The price every floor order fills at: it reads no quotes. */
const PRICE = '50000';
/** 0.1 %: a fee is computed and stored, as the simulator does. */
const FEE_RATE = 0.001;

const SCHEMA = [
  `create table if not exists bench_orders (
     user_id bigint not null,
     client_order_id text not null,
     symbol text not null,
     side text not null,
     qty numeric not null,
     status text not null,
     filled_qty numeric not null,
     avg_fill_price numeric,
     submitted_at timestamptz not null default now(),
     primary key (user_id, client_order_id))`,
  `create table if not exists bench_audit (
     id bigint generated always as identity primary key,
     user_id bigint not null,
     action text not null,
     data jsonb not null,
     created_at timestamptz not null default now())`,
  `create table if not exists bench_fills (
     id bigint generated always as identity primary key,
     user_id bigint not null,
     client_order_id text not null,
     qty numeric not null,
     price numeric not null,
     fee numeric not null,
     filled_at timestamptz not null default now())`,
  `create table if not exists bench_positions (
     user_id bigint not null,
     symbol text not null,
     qty numeric not null,
     primary key (user_id, symbol))`,
];

export interface OrdersFloor {
  server: Server;
  url: string;
  /** The floor's pool, so the bench can reach its connections (e.g. to have their statistics flushed). */
  sql: postgres.Sql;
  poolSize: number;
  close(): Promise<void>;
}

interface FloorOrder {
  userId: number;
  symbol: string;
  side: 'buy' | 'sell';
  qty: number;
  clientOrderId: string;
}

const readBody = (req: IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > limit) reject(new Error('body too large'));
    });
    req.once('end', () => resolve(body));
    req.once('error', reject);
  });

/** The user a request names, FLOOR_USER_ID when it names none, undefined when the header is not a user id. */
const userOf = (req: IncomingMessage): number | undefined => {
  const header = req.headers[FLOOR_USER_HEADER];
  if (header === undefined) return FLOOR_USER_ID;
  const userId = typeof header === 'string' && /^[1-9][0-9]*$/.test(header) ? Number(header) : undefined;
  return userId !== undefined && Number.isSafeInteger(userId) ? userId : undefined;
};

/** The same request shape as ours, checked only as far as the SQL needs. */
const parseOrder = (text: string, userId: number): FloorOrder | undefined => {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const { symbol, side, qty, client_order_id: clientOrderId } = body as Record<string, unknown>;
  if (typeof symbol !== 'string' || (side !== 'buy' && side !== 'sell') || typeof qty !== 'number' || !(qty > 0) || typeof clientOrderId !== 'string' || clientOrderId === '') return undefined;
  return { userId, symbol, side, qty, clientOrderId };
};

const send = (res: ServerResponse, status: number, payload: unknown) => {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
};

/** Creates the floor's tables (if missing) in the database at `databaseUrl` and serves POST {route}. */
export const startOrdersFloor = async ({ databaseUrl, poolSize, route }: { databaseUrl: string; poolSize: number; route: string }): Promise<OrdersFloor> => {
  const sql = postgres(databaseUrl, { max: poolSize, onnotice: () => undefined });
  try {
    for (const statement of SCHEMA) await sql.unsafe(statement);
  } catch (error) {
    await sql.end({ timeout: 5 });
    throw error;
  }

  /** One order, durably: five statements in one transaction, one commit. */
  const place = (order: FloorOrder) =>
    sql.begin(async (tx) => {
      const qty = String(order.qty);
      const fee = String(order.qty * Number(PRICE) * FEE_RATE);
      const [row] = await tx<{ submitted_at: Date }[]>`
        insert into bench_orders (user_id, client_order_id, symbol, side, qty, status, filled_qty, avg_fill_price)
        values (${order.userId}, ${order.clientOrderId}, ${order.symbol}, ${order.side}, ${qty}, 'filled', ${qty}, ${PRICE})
        returning submitted_at`;
      await tx`insert into bench_audit (user_id, action, data) values (${order.userId}, 'order.placed', ${tx.json({ client_order_id: order.clientOrderId, symbol: order.symbol, side: order.side, qty })})`;
      await tx`insert into bench_fills (user_id, client_order_id, qty, price, fee) values (${order.userId}, ${order.clientOrderId}, ${qty}, ${PRICE}, ${fee})`;
      await tx`insert into bench_audit (user_id, action, data) values (${order.userId}, 'order.fill', ${tx.json({ client_order_id: order.clientOrderId, qty, price: PRICE, fee })})`;
      const signed = order.side === 'buy' ? qty : `-${qty}`;
      await tx`
        insert into bench_positions (user_id, symbol, qty) values (${order.userId}, ${order.symbol}, ${signed})
        on conflict (user_id, symbol) do update set qty = bench_positions.qty + excluded.qty`;
      return row!;
    });

  // Same keep-alive setting as ours (server/http/server.ts).
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    if (req.method !== 'POST' || req.url !== route) {
      send(res, 404, { code: 'NOT_FOUND' });
      return;
    }
    void (async () => {
      const text = await readBody(req, 65_536);
      const userId = userOf(req);
      const order = userId === undefined ? undefined : parseOrder(text, userId);
      if (!order) {
        send(res, 400, { code: 'VALIDATION_ERROR' });
        return;
      }
      try {
        const row = await place(order);
        send(res, 201, {
          order_id: order.clientOrderId,
          client_order_id: order.clientOrderId,
          symbol: order.symbol,
          side: order.side,
          qty: order.qty,
          filled_qty: order.qty,
          avg_fill_price: Number(PRICE),
          status: 'filled',
          submitted_at: row.submitted_at.toISOString(),
        });
      } catch (error) {
        const unique = (error as { code?: unknown }).code === '23505';
        send(res, unique ? 409 : 500, { code: unique ? 'DUPLICATE_CLIENT_ORDER_ID' : 'INTERNAL_ERROR' });
      }
    })().catch(() => {
      if (!res.headersSent) send(res, 400, { code: 'BAD_REQUEST' });
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    await sql.end({ timeout: 5 });
    throw error;
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await sql.end({ timeout: 5 });
    })());
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sql, poolSize, close };
};
