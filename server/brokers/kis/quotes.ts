// The real-time trade prices of a set of KRX symbols from KIS's WebSocket (H0STCNT0), as the
// Broker interface's `quotes`: an approval key, one registration per symbol, PINGPONGs echoed,
// and every trade record of a registered symbol handed on as a quote. The connection is kept: a
// watchdog pings (KIS's server answers pings, as its samples' client library relies on) and ends a
// connection that has heard nothing, not even its PINGPONG or a pong, for the silence window, or
// that has not registered every symbol within it; reconnections back off exponentially with
// jitter and register the symbols again; a key the server no longer knows (OPSP0011) is replaced
// by a fresh one. What cannot get better by retrying ends the iterator with a BrokerRejectedError:
// an approval key KIS will not issue, more symbols than a session holds, a refused registration.
import { WebSocket, type RawData } from 'ws';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../observability/logger.ts';
import { pullFromStream, reconnectSchedule, watchSilence, type ReconnectBackoff, type ReconnectRetry, type StreamSink } from '../stream-keepalive.ts';
import { BrokerRejectedError, type BrokerQuote } from '../types.ts';
import type { KisApprovalKeys } from './approval.ts';
import { seoulDate } from './mapping.ts';
import { KIS_MAX_SUBSCRIPTIONS, KIS_QUOTE_MSG, KIS_TRADE_TR_ID, kisRealtimeRequest, parseKisRealtimeFrame, quotesOfTradeRecords } from './quote-wire.ts';

/** What an operator or a test may set of the stream; the adapter fills in the rest. */
export interface KisQuoteStreamTuning {
  /** The WebSocket URL; by default the documented one of the REST origin, or the origin's own host (a fake). */
  url?: string;
  /** Reconnect when nothing, not even a PINGPONG or a pong, has arrived for this many seconds. Default 30. */
  silenceSeconds?: number;
  /** Default 1 s doubling to 30 s. */
  backoff?: ReconnectBackoff;
  /** What paces the watchdog and measures silences: the timers and the wall by default; a test's clock it moves. */
  watchdogClock?: Clock;
  /** Told each scheduled reconnection, before its wait. */
  onRetry?: (retry: ReconnectRetry) => void;
  /** Told each time a connection has every symbol registered: 1 for the first, 2 after the first reconnection, … */
  onSubscribed?: (connection: number) => void;
  /** Told each PINGPONG once it has been echoed. */
  onPingPong?: () => void;
}

export interface KisQuoteStreamOptions extends Omit<KisQuoteStreamTuning, 'url' | 'silenceSeconds' | 'backoff'> {
  url: string;
  silenceMs: number;
  backoff: ReconnectBackoff;
  approval: KisApprovalKeys;
  /** The Korea date of a record that carries none is today's on this clock. */
  now: () => Date;
  random?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

/** How long a closing session may take to say goodbye before it is cut. */
const CLOSE_GRACE_MS = 1_000;

const textOf = (data: RawData): string => {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
};

/** Keeps one registered session until stopped; the answer stops it. */
const keepSession = (options: KisQuoteStreamOptions, symbols: readonly string[], sink: StreamSink<BrokerQuote>) => {
  const wanted = new Set(symbols);
  const schedule = reconnectSchedule(options.backoff, options.random);
  const scrub = options.approval.scrub;
  let stopped = false;
  let connections = 0;
  let socket: { ws: WebSocket; approvalKey: string; registered: Set<string> } | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  const fail = (error: Error) => {
    if (stopped) return;
    stopped = true;
    clearTimeout(retryTimer);
    socket?.ws.terminate();
    sink.fail(error);
  };

  const retry = (reason: string) => {
    if (stopped) return;
    const next = schedule.next(reason);
    options.onRetry?.(next);
    retryTimer = setTimeout(() => void connect(), next.delayMs);
  };

  const open = (approvalKey: string) => {
    const ws = new WebSocket(options.url, { handshakeTimeout: options.silenceMs });
    const session = { ws, approvalKey, registered: new Set<string>() };
    socket = session;
    let endedFor: string | undefined;
    const end = (reason: string) => {
      endedFor ??= reason;
      ws.terminate();
    };
    const watch = watchSilence({
      ...(options.watchdogClock ? { clock: options.watchdogClock } : {}),
      silenceMs: options.silenceMs,
      onRound: (openForMs) => {
        // Heard from, yet not registered within the window: its requests went unanswered.
        if (session.registered.size < wanted.size && openForMs > options.silenceMs) return 'not subscribed';
        if (ws.readyState === WebSocket.OPEN) ws.ping();
        return undefined;
      },
      onGiveUp: end,
    });

    const answered = (frame: Extract<ReturnType<typeof parseKisRealtimeFrame>, { kind: 'answer' }>) => {
      const detail = scrub(`${frame.msg1} (${frame.msgCd})`);
      // "Already in subscribe" is a registration held all the same, whatever its rt_cd.
      if ((frame.ok && frame.msgCd === KIS_QUOTE_MSG.subscribed) || frame.msgCd === KIS_QUOTE_MSG.alreadySubscribed) {
        if (!wanted.has(frame.trKey) || session.registered.has(frame.trKey)) return;
        session.registered.add(frame.trKey);
        if (session.registered.size < wanted.size) return;
        // The session got as far as it should: the next drop starts the backoff afresh.
        schedule.reset();
        connections += 1;
        options.onSubscribed?.(connections);
      } else if (frame.ok) {
        // An unsubscribe's answer, or one the stream has no use for.
      } else if (frame.msgCd === KIS_QUOTE_MSG.approvalUnknown) {
        options.approval.refused(approvalKey);
        end(`approval key refused: ${detail}`);
      } else if (frame.msgCd === KIS_QUOTE_MSG.appKeyInUse || (KIS_QUOTE_MSG.passing as readonly string[]).includes(frame.msgCd)) {
        end(`registration failed for now: ${detail}`);
      } else if (frame.msgCd === KIS_QUOTE_MSG.subscriptionsFull) {
        fail(new BrokerRejectedError(`KIS refused to register more real-time prices on the session (${wanted.size} asked for): ${detail}`));
      } else {
        fail(new BrokerRejectedError(`KIS refused the real-time price of ${frame.trKey || 'a symbol'}: ${detail}`));
      }
    };

    const received = (text: string) => {
      const frame = parseKisRealtimeFrame(text);
      switch (frame.kind) {
        case 'pingpong':
          // KIS ends a session that does not answer its PINGPONG: the frame goes back as it came.
          ws.send(text);
          options.onPingPong?.();
          return;
        case 'answer':
          return answered(frame);
        case 'data': {
          if (frame.trId !== KIS_TRADE_TR_ID) return;
          if (frame.encrypted) return void options.logger?.warn('kis: an encrypted H0STCNT0 frame (never sent clear-text trades encrypted before); dropped');
          const { quotes, dropped } = quotesOfTradeRecords(frame.records, seoulDate(options.now()));
          if (dropped.length > 0) options.logger?.warn({ dropped }, 'kis: trade records without a usable time or price; dropped');
          for (const quote of quotes) if (wanted.has(quote.symbol)) sink.push(quote);
          return;
        }
        case 'malformed':
          return void options.logger?.warn({ why: frame.why }, 'kis: a quote stream frame that is not KIS’s; dropped');
      }
    };

    ws.on('open', () => {
      watch.heard();
      for (const symbol of wanted) ws.send(JSON.stringify(kisRealtimeRequest(approvalKey, symbol, true)));
    });
    ws.on('pong', watch.heard);
    ws.on('message', (data) => {
      watch.heard();
      received(textOf(data));
    });
    // 'close' follows every error; what happens next is decided there.
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      watch.stop();
      if (socket === session) socket = undefined;
      retry(endedFor ?? (watch.isSilent() ? 'silent' : `closed (${code})`));
    });
  };

  async function connect() {
    retryTimer = undefined;
    if (stopped) return;
    let approvalKey: string;
    try {
      approvalKey = await options.approval.key();
    } catch (error) {
      // A key KIS will not issue stays refused; an issuance that failed on the way is tried again.
      if (error instanceof BrokerRejectedError) return fail(error);
      return retry(`no approval key: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!stopped) open(approvalKey);
  }

  void connect();
  return () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(retryTimer);
    const session = socket;
    if (!session) return;
    if (session.ws.readyState !== WebSocket.OPEN) return void session.ws.terminate();
    // Registrations are the session's and end with it; removing them first is KIS's polite way out.
    for (const symbol of session.registered) session.ws.send(JSON.stringify(kisRealtimeRequest(session.approvalKey, symbol, false)));
    session.ws.close(1000);
    setTimeout(() => session.ws.terminate(), CLOSE_GRACE_MS).unref();
  };
};

/** KRX short codes (6 characters today); anything else would be a request KIS cannot read. */
const SYMBOL = /^[0-9A-Za-z]{1,12}$/;

/** The symbols' trade prices from now on, until the signal aborts; see the header. */
export async function* streamKisQuotes(options: KisQuoteStreamOptions, symbols: readonly string[], signal: AbortSignal): AsyncGenerator<BrokerQuote> {
  const wanted = [...new Set(symbols)];
  const unreadable = wanted.find((symbol) => !SYMBOL.test(symbol));
  if (unreadable !== undefined) throw new BrokerRejectedError(`"${unreadable.slice(0, 20)}" is not a KRX symbol KIS streams`);
  if (wanted.length > KIS_MAX_SUBSCRIPTIONS) throw new BrokerRejectedError(`KIS streams at most ${KIS_MAX_SUBSCRIPTIONS} symbols on one session; ${wanted.length} were asked for`);
  // Nothing to register: no session, only the wait for the end.
  yield* pullFromStream<BrokerQuote>((sink) => (wanted.length === 0 ? () => undefined : keepSession(options, wanted, sink)), signal);
}
