// The WebSocket bench's client process (test/bench/ws.ts starts it with an IPC channel): it holds
// the idle connections and runs the sampler, so the servers measured in the parent never share
// their event loop with a client. One command at a time, each answered with one message:
// - open: `count` connections to `url` (the i-th with `?token=tokens[i % tokens.length]` when
//   tokens are given), `batch` at a time so the server's listen backlog is never overrun; a
//   connection counts as open when its first frame (the hello) has arrived.
// - close: closes a group's connections and waits (bounded) for them to be gone.
// - sample: one more connection (the sampler's), then orders one after another: POST, note when
//   the answer has been read in full, note when that order's frames arrive on the socket.
// Both instants are read here with the same clock, so the figure is what a client sees. Nothing
// of the service is imported: this process loads node:http and ws only.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

export type ClientCommand =
  | { op: 'open'; group: string; url: string; tokens: string[] | null; count: number; batch: number; timeoutMs: number }
  | { op: 'close'; group: string; timeoutMs: number }
  | { op: 'sample'; target: SampleTarget; samples: number; maxSeconds: number; frameTimeoutMs: number };

export interface SampleTarget {
  name: string;
  /** The sampler's socket (its hello is awaited before the first order). */
  wsUrl: string;
  postUrl: string;
  headers: Record<string, string>;
  /** The request body, without client_order_id: `${idPrefix}-${n}` is added per order. */
  order: Record<string, unknown>;
  idPrefix: string;
  /** Wait for the order's first fill frame too before the next order (ours fills after answering; the bare reference has no fill). */
  waitFill: boolean;
}

export interface OpenResult {
  group: string;
  opened: number;
  failed: number;
  /** The first few failures, as text. */
  errors: string[];
  ms: number;
  /** Connections of the group open now. */
  open: number;
}

export interface CloseResult {
  group: string;
  closed: number;
  /** Connections of the group the server had closed before it was asked to (a sign of trouble). */
  closedEarly: number;
  ms: number;
}

export interface SampleResult {
  name: string;
  /** Orders answered 201 and counted. */
  samples: number;
  /** Per counted order, frame arrival - answer arrival, ms (negative: the frame came first); a frame never seen counts as the time waited for it. */
  acceptedMs: number[];
  fillMs: number[];
  /** Per counted order, the POST's round trip, ms. */
  postMs: number[];
  missingAccepted: number;
  missingFill: number;
  statusCodes: Record<string, number>;
  errors: number;
  wallSec: number;
  /** The sampler's socket was closed by the server during the run. */
  samplerClosed: boolean;
}

type Reply = { ok: true; result: OpenResult | CloseResult | SampleResult } | { ok: false; error: string };

interface Held {
  ws: WebSocket;
  closedEarly: boolean;
}

const groups = new Map<string, Held[]>();
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** Opens one connection; resolves with it once its first frame has arrived. */
const openOne = (url: string, timeoutMs: number, onFrame?: (data: Buffer, at: number) => void): Promise<WebSocket> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, autoPong: true });
    let first = true;
    const timer = setTimeout(() => fail(new Error(`no first frame within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      ws.terminate();
      reject(error);
    };
    ws.on('message', (data: Buffer) => {
      const at = performance.now();
      if (first) {
        first = false;
        clearTimeout(timer);
        resolve(ws);
        return;
      }
      onFrame?.(data, at);
    });
    ws.on('error', (error) => {
      if (first) fail(error);
    });
    ws.once('close', (code, reason) => {
      if (first) fail(new Error(`closed before the first frame: ${code} ${reason.toString('utf8')}`));
    });
  });

const open = async (command: Extract<ClientCommand, { op: 'open' }>): Promise<OpenResult> => {
  const started = performance.now();
  const held = groups.get(command.group) ?? [];
  groups.set(command.group, held);
  const errors: string[] = [];
  let opened = 0;
  let failed = 0;
  const urlOf = (i: number) => {
    if (!command.tokens || command.tokens.length === 0) return command.url;
    const url = new URL(command.url);
    url.searchParams.set('token', command.tokens[i % command.tokens.length]!);
    return url.toString();
  };
  for (let from = 0; from < command.count; from += command.batch) {
    const size = Math.min(command.batch, command.count - from);
    await Promise.all(
      Array.from({ length: size }, async (_, k) => {
        try {
          const ws = await openOne(urlOf(from + k), command.timeoutMs);
          const entry: Held = { ws, closedEarly: false };
          ws.once('close', () => (entry.closedEarly = true));
          held.push(entry);
          opened++;
        } catch (error) {
          failed++;
          if (errors.length < 5) errors.push(error instanceof Error ? error.message : String(error));
        }
      }),
    );
  }
  return { group: command.group, opened, failed, errors, ms: performance.now() - started, open: held.filter((h) => h.ws.readyState === WebSocket.OPEN).length };
};

const closeGroup = async (command: Extract<ClientCommand, { op: 'close' }>): Promise<CloseResult> => {
  const started = performance.now();
  const held = groups.get(command.group) ?? [];
  groups.delete(command.group);
  const closedEarly = held.filter((h) => h.closedEarly).length;
  const waits = held.map(
    ({ ws }) =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) {
          resolve();
          return;
        }
        ws.once('close', () => resolve());
        ws.close(1000, 'bench done');
      }),
  );
  const bound = new Promise<void>((resolve) => setTimeout(resolve, command.timeoutMs).unref());
  await Promise.race([Promise.all(waits), bound]);
  // Whatever did not finish its closing handshake in time is cut.
  for (const { ws } of held) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
  return { group: command.group, closed: held.length, closedEarly, ms: performance.now() - started };
};

/** POSTs `body`; resolves when the answer has been read to its end, with its status (0: no answer). */
const post = (url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> =>
  new Promise((resolve) => {
    let settled = false;
    const done = (status: number) => {
      if (!settled) {
        settled = true;
        resolve(status);
      }
    };
    const req = http.request(
      {
        agent,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume();
        res.once('end', () => done(res.statusCode ?? 0));
        res.once('error', () => done(0));
      },
    );
    req.setTimeout(timeoutMs, () => {
      done(0);
      req.destroy();
    });
    req.once('error', () => done(0));
    req.end(body);
  });

const FILL_TYPES = new Set(['fill', 'filled', 'partial_fill']);

interface Pending {
  acceptedAt?: number;
  fillAt?: number;
  /** Called on every frame of this order. */
  wake?: () => void;
}

const sample = async ({ target, samples, maxSeconds, frameTimeoutMs }: Extract<ClientCommand, { op: 'sample' }>): Promise<SampleResult> => {
  const pending = new Map<string, Pending>();
  const onFrame = (data: Buffer, at: number) => {
    let frame: { type?: unknown; event_type?: unknown; client_order_id?: unknown };
    try {
      frame = JSON.parse(data.toString('utf8')) as typeof frame;
    } catch {
      return;
    }
    if (frame.type !== 'order_event' || typeof frame.client_order_id !== 'string') return;
    const entry = pending.get(frame.client_order_id);
    if (!entry) return;
    if (frame.event_type === 'accepted') entry.acceptedAt ??= at;
    else if (typeof frame.event_type === 'string' && FILL_TYPES.has(frame.event_type)) entry.fillAt ??= at;
    entry.wake?.();
  };
  const ws = await openOne(target.wsUrl, frameTimeoutMs, onFrame);
  let samplerClosed = false;
  ws.once('close', () => (samplerClosed = true));
  ws.on('error', () => undefined);
  const result: SampleResult = { name: target.name, samples: 0, acceptedMs: [], fillMs: [], postMs: [], missingAccepted: 0, missingFill: 0, statusCodes: {}, errors: 0, wallSec: 0, samplerClosed: false };
  const url = new URL(target.postUrl);
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  try {
    for (let n = 1; n <= samples && performance.now() < deadline && !samplerClosed; n++) {
      const clientOrderId = `${target.idPrefix}-${n}`;
      const entry: Pending = {};
      pending.set(clientOrderId, entry);
      const body = JSON.stringify({ ...target.order, client_order_id: clientOrderId });
      const sent = performance.now();
      const status = await post(url, target.headers, body, frameTimeoutMs);
      const answeredAt = performance.now();
      if (status === 0) {
        result.errors++;
        pending.delete(clientOrderId);
        continue;
      }
      result.statusCodes[status] = (result.statusCodes[status] ?? 0) + 1;
      if (status !== 201) {
        pending.delete(clientOrderId);
        continue;
      }
      // Wait (bounded) for the frames this order is measured by.
      const complete = () => entry.acceptedAt !== undefined && (!target.waitFill || entry.fillAt !== undefined);
      if (!complete()) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            entry.wake = undefined;
            resolve();
          }, frameTimeoutMs);
          entry.wake = () => {
            if (!complete()) return;
            clearTimeout(timer);
            entry.wake = undefined;
            resolve();
          };
        });
      }
      pending.delete(clientOrderId);
      result.samples++;
      result.postMs.push(answeredAt - sent);
      if (entry.acceptedAt === undefined) {
        result.missingAccepted++;
        result.acceptedMs.push(frameTimeoutMs);
      } else {
        result.acceptedMs.push(entry.acceptedAt - answeredAt);
      }
      if (target.waitFill) {
        if (entry.fillAt === undefined) {
          result.missingFill++;
          result.fillMs.push(frameTimeoutMs);
        } else {
          result.fillMs.push(entry.fillAt - answeredAt);
        }
      }
    }
  } finally {
    result.wallSec = (performance.now() - started) / 1000;
    result.samplerClosed = samplerClosed;
    await new Promise<void>((resolve) => {
      if (ws.readyState === WebSocket.CLOSED) {
        resolve();
        return;
      }
      const cut = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2_000);
      ws.once('close', () => {
        clearTimeout(cut);
        resolve();
      });
      ws.close(1000, 'bench done');
    });
  }
  return result;
};

const handle = async (command: ClientCommand): Promise<OpenResult | CloseResult | SampleResult> => {
  switch (command.op) {
    case 'open':
      return open(command);
    case 'close':
      return closeGroup(command);
    case 'sample':
      return sample(command);
  }
};

process.on('message', (command: ClientCommand) => {
  handle(command).then(
    (result) => process.send?.({ ok: true, result } satisfies Reply),
    (error: unknown) => process.send?.({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies Reply),
  );
});
// The parent gone (or done): nothing is left to hold connections for.
process.once('disconnect', () => {
  for (const held of groups.values()) for (const { ws } of held) ws.terminate();
  agent.destroy();
  process.exit(0);
});
