// The fake KIS's real-time price stream: a WebSocket on the fake's HTTP server at KIS's sample
// path, taking H0STCNT0 registrations (tr_type 1) and removals (2) checked against the approval
// keys the fake issued, answering each with KIS's JSON acknowledgement (OPSP codes), sending a
// PINGPONG every `pingPongIntervalMs` and counting the ones echoed back, and a trade frame
// (`0|H0STCNT0|<count>|<records>`) to a symbol's subscribers whenever its price is set. Faults:
// drop the sessions (and refuse the next connections), or make them go silent (nothing sent, no
// answers, no pongs) as a stuck connection would.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { KIS_MAX_SUBSCRIPTIONS, KIS_PINGPONG_TR_ID, KIS_QUOTE_MSG, KIS_QUOTES_PATH, KIS_TRADE_FIELDS, KIS_TRADE_TR_ID, type KisRealtimeRequest } from '../brokers/kis/quote-wire.ts';
import { seoulDate } from '../brokers/kis/mapping.ts';
import { hhmmss, type FakeKisBooks } from './kis-books.ts';

export interface FakeKisTrade {
  symbol: string;
  /** Decimal text, sent as it is. */
  price: string;
  /** The trade's instant; the fake's now by default. */
  at?: Date;
}

export interface FakeKisQuotesOptions {
  server: Server;
  books: FakeKisBooks;
  now: () => Date;
  /** The app key an approval key was issued to, while the fake still knows it. */
  approvalOwner: (approvalKey: string) => string | undefined;
  pingPongIntervalMs: number;
  maxSubscriptions?: number;
}

interface Session {
  socket: WebSocket;
  symbols: Set<string>;
  pingPongEchoes: number;
}

/** One H0STCNT0 record with KIS's 46 fields: the ones the tests read, plausible values elsewhere. */
const tradeRecord = (trade: Required<FakeKisTrade>): string[] => {
  const fields: string[] = KIS_TRADE_FIELDS.map(() => '0');
  const set = (name: (typeof KIS_TRADE_FIELDS)[number], value: string) => void (fields[KIS_TRADE_FIELDS.indexOf(name)] = value);
  set('MKSC_SHRN_ISCD', trade.symbol);
  set('STCK_CNTG_HOUR', hhmmss(trade.at));
  set('STCK_PRPR', trade.price);
  set('PRDY_VRSS_SIGN', '3');
  for (const name of ['STCK_OPRC', 'STCK_HGPR', 'STCK_LWPR', 'ASKP1', 'BIDP1'] as const) set(name, trade.price);
  set('CNTG_VOL', '1');
  set('BSOP_DATE', seoulDate(trade.at));
  set('TRHT_YN', 'N');
  return fields;
};

/** The text frame KIS sends for trades of one tr_id: every record's fields joined by ^. */
export const kisTradeFrame = (trades: readonly Required<FakeKisTrade>[]) => `0|${KIS_TRADE_TR_ID}|${String(trades.length).padStart(3, '0')}|${trades.map((trade) => tradeRecord(trade).join('^')).join('^')}`;

const kstStamp = (at: Date) => new Date(at.getTime() + 9 * 3_600_000).toISOString().slice(0, 19).replace(/\D/g, '');

export const startFakeKisQuotes = (options: FakeKisQuotesOptions) => {
  const maxSubscriptions = options.maxSubscriptions ?? KIS_MAX_SUBSCRIPTIONS;
  const sessions = new Set<Session>();
  const requests: Array<{ trType: string; trKey: string; appKey: string | undefined }> = [];
  let connections = 0;
  let refuseConnections = 0;
  let silent = false;
  let pingPongEchoes = 0;
  let ignoredWhileSilent = 0;

  const send = (session: Session, text: string) => {
    if (!silent && session.socket.readyState === session.socket.OPEN) session.socket.send(text);
  };
  const answer = (session: Session, trKey: string, ok: boolean, msgCd: string, msg1: string, output?: Record<string, string>) =>
    send(session, JSON.stringify({ header: { tr_id: KIS_TRADE_TR_ID, tr_key: trKey, encrypt: 'N' }, body: { rt_cd: ok ? '0' : '1', msg_cd: msgCd, msg1, ...(output ? { output } : {}) } }));

  const publish = (trades: readonly FakeKisTrade[]) => {
    const full = trades.map((trade) => ({ ...trade, at: trade.at ?? options.now() }));
    for (const session of sessions) {
      const theirs = full.filter((trade) => session.symbols.has(trade.symbol));
      if (theirs.length > 0) send(session, kisTradeFrame(theirs));
    }
  };
  const stopPrices = options.books.onPrice((symbol, price) => publish([{ symbol, price }]));

  const pingPong = () => {
    const text = JSON.stringify({ header: { tr_id: KIS_PINGPONG_TR_ID, datetime: kstStamp(options.now()) } });
    for (const session of sessions) send(session, text);
  };
  const pingPongTimer = setInterval(pingPong, options.pingPongIntervalMs).unref();

  const received = (session: Session, text: string) => {
    let message: Partial<KisRealtimeRequest> & { header?: { tr_id?: string } };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return answer(session, '', false, 'OPSP9999', 'JSON PARSING ERROR : invalid json format');
    }
    if (message.header?.tr_id === KIS_PINGPONG_TR_ID) {
      session.pingPongEchoes += 1;
      pingPongEchoes += 1;
      return;
    }
    const header = message.header;
    const input = message.body?.input;
    const trKey = input?.tr_key ?? '';
    const appKey = options.approvalOwner(header?.approval_key ?? '');
    requests.push({ trType: header?.tr_type ?? '', trKey, appKey });
    if (!appKey) return answer(session, trKey, false, KIS_QUOTE_MSG.approvalUnknown, 'invalid approval : NOT FOUND');
    if (input?.tr_id !== KIS_TRADE_TR_ID) return answer(session, trKey, false, 'OPSP8991', 'SUBSCRIBE ERROR : invalid tr_id');
    if (!/^[0-9A-Z]{6}$/.test(trKey)) return answer(session, trKey, false, 'OPSP8992', 'SUBSCRIBE ERROR : invalid tr_key');
    if (header?.tr_type === '1') {
      if (session.symbols.has(trKey)) return answer(session, trKey, false, KIS_QUOTE_MSG.alreadySubscribed, 'ALREADY IN SUBSCRIBE');
      if (session.symbols.size >= maxSubscriptions) return answer(session, trKey, false, KIS_QUOTE_MSG.subscriptionsFull, 'MAX SUBSCRIBE OVER');
      session.symbols.add(trKey);
      return answer(session, trKey, true, KIS_QUOTE_MSG.subscribed, 'SUBSCRIBE SUCCESS', { iv: randomBytes(8).toString('hex'), key: randomBytes(16).toString('hex') });
    }
    if (header?.tr_type === '2') {
      if (!session.symbols.delete(trKey)) return answer(session, trKey, false, 'OPSP0003', 'UNSUBSCRIBE ERROR(not found!)');
      return answer(session, trKey, true, KIS_QUOTE_MSG.unsubscribed, 'UNSUBSCRIBE SUCCESS');
    }
    return answer(session, trKey, false, 'OPSP8997', 'JSON PARSING ERROR : invalid tr_type');
  };

  // Pongs are the fake's to answer, so a silenced session can fall quiet as a stuck one would.
  const wss = new WebSocketServer({ server: options.server, path: KIS_QUOTES_PATH, autoPong: false });
  wss.on('connection', (socket) => {
    connections += 1;
    if (refuseConnections > 0) {
      refuseConnections -= 1;
      socket.terminate();
      return;
    }
    const session: Session = { socket, symbols: new Set(), pingPongEchoes: 0 };
    sessions.add(session);
    socket.on('close', () => sessions.delete(session));
    socket.on('ping', (data) => {
      if (!silent) socket.pong(data);
    });
    socket.on('message', (data) => {
      if (silent) ignoredWhileSilent += 1;
      else received(session, (data as Buffer).toString('utf8'));
    });
  });

  return {
    /** Connections made so far, refused ones included. */
    get connections() {
      return connections;
    },
    /** PINGPONG frames echoed back by clients so far. */
    get pingPongEchoes() {
      return pingPongEchoes;
    },
    /** Client frames (registrations, echoes) dropped unanswered while silent. */
    get ignoredWhileSilent() {
      return ignoredWhileSilent;
    },
    /** Every registration and removal asked for (the app key its approval key belongs to, if known). */
    requests,
    /** The symbols each open session holds. */
    sessions: () => [...sessions].map((session) => [...session.symbols].sort()),
    /** One frame of these trades to each session holding any of their symbols (only its symbols' records). */
    publish,
    /** A text frame, as it is, to every session. */
    sendRaw: (text: string) => {
      for (const session of sessions) send(session, text);
    },
    /** A PINGPONG to every session now (besides the timer's). */
    pingPong,
    /** Drops every session; the next `refuseNext` connections are dropped on arrival. */
    drop: (refuseNext = 0) => {
      refuseConnections = refuseNext;
      for (const session of sessions) session.socket.terminate();
    },
    /** While silent, the sessions hear nothing: no trades, no answers, no PINGPONGs, no pongs. */
    setSilent: (on: boolean) => void (silent = on),
    close: () => {
      clearInterval(pingPongTimer);
      stopPrices();
      for (const session of sessions) session.socket.terminate();
      wss.close();
    },
  };
};

export type FakeKisQuotes = ReturnType<typeof startFakeKisQuotes>;
