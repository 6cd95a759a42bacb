// The sockets of one of the fake Binance's WebSocket endpoints (the WebSocket API of
// binance-ws.ts, the market streams of binance-market-ws.ts): upgrades counted and refusable,
// ping frames answered, JSON requests parsed, and the faults both offer: drop the sockets (and
// refuse the next connections), or make the open ones go silent (nothing sent, nothing answered,
// no pongs) as a stuck connection would.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ExactDecimal } from '../decimal.ts';

/** Binance's wire decimals: 8 places. */
export const binanceDecimal = (text: string) => new ExactDecimal(text).toFixed(8);

export interface FakeBinanceSocket<S> {
  socket: WebSocket;
  silent: boolean;
  /** What the endpoint keeps of the socket (its subscriptions). */
  state: S;
}

export interface FakeBinanceSocketsOptions<S> {
  /** A new socket's state, from its upgrade request (the path names a raw stream, say). */
  stateOf: (request: IncomingMessage) => S;
  /** A request frame as parsed JSON. */
  onRequest: (session: FakeBinanceSocket<S>, request: unknown) => void;
  /** A frame that is not JSON: what the endpoint answers. */
  malformed: unknown;
}

export const createFakeBinanceSockets = <S>(options: FakeBinanceSocketsOptions<S>) => {
  // Pongs are the fake's to answer, so a silenced socket falls quiet as a stuck one would.
  const wss = new WebSocketServer({ noServer: true, autoPong: false });
  const sessions = new Set<FakeBinanceSocket<S>>();
  let connections = 0;
  let refuseNext = 0;

  const send = (session: FakeBinanceSocket<S>, message: unknown) => {
    if (!session.silent && session.socket.readyState === session.socket.OPEN) session.socket.send(JSON.stringify(message));
  };

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const session: FakeBinanceSocket<S> = { socket, silent: false, state: options.stateOf(request) };
    sessions.add(session);
    socket.on('close', () => sessions.delete(session));
    socket.on('ping', (data) => {
      if (!session.silent) socket.pong(data);
    });
    socket.on('message', (data) => {
      if (session.silent) return;
      let request: unknown;
      try {
        request = JSON.parse((data as Buffer).toString('utf8'));
      } catch {
        return send(session, options.malformed);
      }
      options.onRequest(session, request);
    });
  });

  return {
    send,
    /** The open sockets, silenced ones included. */
    sessions: () => [...sessions],
    /** Serves an upgrade of this endpoint's path; refused (503) while connections are refused. */
    upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      connections += 1;
      if (refuseNext > 0) {
        refuseNext -= 1;
        socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
    },
    /** Connections attempted so far (refused ones included). */
    get connections() {
      return connections;
    },
    /** Ends every socket and refuses the next `refuse` connections (503 on the upgrade). */
    drop: (refuse = 0) => {
      refuseNext = refuse;
      for (const session of sessions) session.socket.terminate();
    },
    /** The sockets open now go silent for good: nothing sent, no answers, no pongs. New connections are served. */
    silence: () => {
      for (const session of sessions) session.silent = true;
    },
    close: () => {
      for (const session of sessions) session.socket.terminate();
      wss.close();
    },
  };
};
