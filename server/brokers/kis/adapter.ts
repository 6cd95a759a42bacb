// One KIS account (app key + account number) seen through the Broker interface: orders through
// order-cash and order-rvsecncl, reads through the daily order/fill inquiry and the balance,
// prices through the quotations, and events by polling the daily inquiry. Our client order id is
// kept in the link store, since KIS takes none.
import type { TBar } from '../../marketdata/bars.ts';
import type { Logger } from '../../observability/logger.ts';
import { createLimiterRegistry, type LimiterRegistry } from '../alpaca/limiter.ts';
import { UNTRIGGERED_ORDER_TYPES, NO_ORDER_CLASSES, BrokerOrderAmbiguousError, BrokerRejectedError, BrokerUnavailableError, type Broker, type BrokerOrder, type BrokerPosition, type OrderIntent } from '../types.ts';
import { createKisApprovalKeys } from './approval.ts';
import { createKisHttp, type KisHttp } from './http.ts';
import { createMemoryLinkStore, unlinkedCandidates, type KisOrderLinkStore } from './links.ts';
import {
  barFromKisChart,
  fromKisBalance,
  fromKisRow,
  isReviseOrCancelRow,
  isWorking,
  kisBrokerOrderId,
  parseKisBrokerOrderId,
  positionsFromHoldings,
  seoulDate,
  seoulInstant,
  toKisOrderCash,
  KIS_BROKER_NAME,
  type KisAccountKey,
  type KisAccountNumber,
} from './mapping.ts';
import { pollKisEvents } from './poller.ts';
import { kisQuoteStreamUrl } from './quote-wire.ts';
import { streamKisQuotes, type KisQuoteStreamTuning } from './quotes.ts';
import { createKisTokenManager, sharedTokenStore, type KisStoredToken, type KisTokenStore } from './token.ts';
import {
  KIS_LIVE_URL,
  KIS_PAPER_URL,
  KIS_PATHS,
  type KisBalanceAnswer,
  type KisDailyChartAnswer,
  type KisDailyOrderRow,
  type KisDailyOrdersAnswer,
  type KisOrderAnswer,
  type KisPriceAnswer,
  type KisReviseCancelRequest,
} from './wire.ts';

/**
 * KIS's published limits per app key: 20 requests a second live, 2 a second on the paper domain
 * (it was 5 before; an operator can raise it by passing a registry).
 */
export const KIS_LIVE_REQUESTS_PER_SECOND = 20;
export const KIS_PAPER_REQUESTS_PER_SECOND = 2;
/** Our own ceiling per KIS host, over all keys: what this service sends to one origin at most. */
export const KIS_HOST_REQUESTS_PER_SECOND = 50;

const perSecond = (count: number) => ({ requestsPerMinute: count * 60, burst: count });

/** The process's limiters: per app key (paper and live keys have their own budgets) and per host. */
export const kisLimiters = {
  liveKeys: createLimiterRegistry(perSecond(KIS_LIVE_REQUESTS_PER_SECOND)),
  paperKeys: createLimiterRegistry(perSecond(KIS_PAPER_REQUESTS_PER_SECOND)),
  hosts: createLimiterRegistry(perSecond(KIS_HOST_REQUESTS_PER_SECOND)),
};

export interface KisBrokerOptions extends KisAccountKey, KisAccountNumber {
  appKey: string;
  appSecret: string;
  /** The origin; the documented paper (or live) one when left out. */
  baseUrl?: string;
  /** Per REST call. Default 10 s. */
  timeoutMs?: number;
  /** The key's limiters and the hosts': pass the service's shared ones; by default the process's. */
  keyLimiters?: LimiterRegistry;
  hostLimiters?: LimiterRegistry;
  /** Where the token is kept: the service's store in Postgres, shared by every instance; by default the process's. */
  tokenStore?: KisTokenStore;
  /** The token issuances in flight in this process: by default the process's (tests playing two instances give each its own). */
  tokenInFlight?: Map<string, Promise<KisStoredToken>>;
  /** Renew the token this long before it expires. Default 10 minutes. */
  tokenRenewBeforeMs?: number;
  /** Client order id ↔ KIS order: the service's orders; by default one in memory per adapter. */
  links?: KisOrderLinkStore;
  /**
   * A placement reaches KIS within this long of its intent (its timeouts and retries are far
   * shorter): an order whose answer was lost is looked for among the day's orders placed up to
   * this long after the intent, and only once this long has passed. Default 2 minutes.
   */
  lostOrderWindowMs?: number;
  /** "Too many requests" retries (default 3) and their backoff (default 250 ms doubling to 2 s). */
  maxRateLimitRetries?: number;
  rateLimitBackoff?: { baseMs: number; maxMs: number };
  maxRetryAfterSeconds?: number;
  /** How often events() reads the day's orders. Default 2 s. */
  pollIntervalMs?: number;
  /** events() reports the day's fills from its start (see poller.ts). Default false. */
  replayToday?: boolean;
  /** Pages read of a paged inquiry at most (15 rows a page on paper, 100 live). Default 20. */
  maxPages?: number;
  /** quotes(): the WebSocket URL, the watchdog's silence (30 s), the reconnect backoff (1 s to 30 s) and hooks. */
  quoteStream?: KisQuoteStreamTuning;
  /** Told after every reading of events(); the next reading waits for what it returns. */
  onPoll?: () => void | Promise<void>;
  random?: () => number;
  logger?: Pick<Logger, 'warn'>;
  now?: () => Date;
}

/** What KIS offers beyond the Broker interface. */
export interface KisBroker extends Broker {
  /** Daily bars of a symbol between two dates (YYYY-MM-DD, inclusive), oldest first. */
  dailyBars(symbol: string, from: string, to: string): Promise<TBar[]>;
  /** The rows of one day's orders, every page (the reconciler's raw material). */
  dailyOrderRows(orderDate: string): Promise<KisDailyOrderRow[]>;
}

const compactDate = (iso: string) => iso.replaceAll('-', '');
const dayBefore = (compact: string) => {
  const date = new Date(`${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6, 8)}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10).replaceAll('-', '');
};

export const createKisBroker = (options: KisBrokerOptions): KisBroker => {
  const key: KisAccountKey = { userId: options.userId, mode: options.mode };
  const account: KisAccountNumber = { accountNo: options.accountNo, productCode: options.productCode };
  const origin = new URL(options.baseUrl ?? (options.mode === 'live' ? KIS_LIVE_URL : KIS_PAPER_URL)).origin;
  const now = options.now ?? (() => new Date());
  const links = options.links ?? createMemoryLinkStore();
  const maxPages = options.maxPages ?? 20;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const scrubSecret = (text: string) => (options.appSecret ? text.split(options.appSecret).join('[redacted]') : text);
  const tokens = createKisTokenManager({
    origin,
    mode: options.mode,
    appKey: options.appKey,
    appSecret: options.appSecret,
    store: options.tokenStore ?? sharedTokenStore,
    renewBeforeMs: options.tokenRenewBeforeMs ?? 10 * 60_000,
    timeoutMs,
    scrub: scrubSecret,
    now: () => now().getTime(),
    ...(options.tokenInFlight ? { inFlight: options.tokenInFlight } : {}),
  });
  const keyLimiter = (options.keyLimiters ?? (options.mode === 'live' ? kisLimiters.liveKeys : kisLimiters.paperKeys)).forKey(`${origin}|${options.appKey}`);
  const hostLimiter = (options.hostLimiters ?? kisLimiters.hosts).forKey(origin);
  const http: KisHttp = createKisHttp({
    origin,
    mode: options.mode,
    appKey: options.appKey,
    appSecret: options.appSecret,
    tokens,
    keyLimiter,
    hostLimiter,
    timeoutMs,
    maxRateLimitRetries: options.maxRateLimitRetries ?? 3,
    rateLimitBackoff: options.rateLimitBackoff ?? { baseMs: 250, maxMs: 2_000 },
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 10,
    ...(options.random ? { random: options.random } : {}),
  });

  const accountFields = { CANO: account.accountNo, ACNT_PRDT_CD: account.productCode };
  // The quote streams' approval key, kept by the adapter: one issuance serves every stream of it.
  const approval = createKisApprovalKeys({ origin, appKey: options.appKey, appSecret: options.appSecret, timeoutMs, limiters: [keyLimiter, hostLimiter], scrub: scrubSecret, now: () => now().getTime() });
  const { url: quotesUrl, silenceSeconds: quotesSilenceSeconds, backoff: quotesBackoff, ...quoteHooks } = options.quoteStream ?? {};

  /** Every page of one day's orders (or of one order, with its number). */
  const dailyOrderRows = async (orderDate: string, odno = ''): Promise<KisDailyOrderRow[]> => {
    const rows: KisDailyOrderRow[] = [];
    let context = { fk: '', nk: '' };
    for (let page = 0; page < maxPages; page += 1) {
      const reply = await http.request<KisDailyOrdersAnswer>({
        call: 'dailyOrders',
        method: 'GET',
        path: KIS_PATHS.dailyOrders,
        trCont: page === 0 ? '' : 'N',
        query: {
          ...accountFields,
          INQR_STRT_DT: orderDate,
          INQR_END_DT: orderDate,
          SLL_BUY_DVSN_CD: '00',
          INQR_DVSN: '01',
          PDNO: '',
          CCLD_DVSN: '00',
          ORD_GNO_BRNO: '',
          ODNO: odno,
          INQR_DVSN_3: '00',
          INQR_DVSN_1: '',
          CTX_AREA_FK100: context.fk,
          CTX_AREA_NK100: context.nk,
        },
      });
      rows.push(...(reply.body.output1 ?? []));
      if (reply.trCont !== 'M' && reply.trCont !== 'F') return rows;
      context = { fk: reply.body.ctx_area_fk100, nk: reply.body.ctx_area_nk100 };
    }
    throw new BrokerUnavailableError(`KIS's daily orders of ${orderDate} ran past ${maxPages} pages`);
  };

  /** The order's own row (not a revise or cancel row naming it). */
  const rowOf = async (brokerOrderId: string): Promise<KisDailyOrderRow | undefined> => {
    const id = parseKisBrokerOrderId(brokerOrderId);
    if (!id) return undefined;
    const rows = await dailyOrderRows(id.orderDate, id.odno);
    return rows.find((row) => row.odno === id.odno && row.ord_dt === id.orderDate && !isReviseOrCancelRow(row));
  };

  const orderOf = async (row: KisDailyOrderRow): Promise<BrokerOrder> => {
    const link = await links.byBrokerOrderId(kisBrokerOrderId(row.ord_dt, row.odno));
    return fromKisRow(row, key, seoulDate(now()), link);
  };

  const getByBrokerOrderId = async (brokerOrderId: string) => {
    const row = await rowOf(brokerOrderId);
    return row && orderOf(row);
  };

  const lostOrderWindowMs = options.lostOrderWindowMs ?? 120_000;

  /**
   * The order of an intent that has no link (KIS took it but its answer never reached us: a
   * timeout, a crash before our write), found among that day's orders by symbol, side, quantity
   * and time, and linked when it is the only one. Several that fit are not guessed between.
   */
  const findLostOrder = async (clientOrderId: string, intent: OrderIntent): Promise<BrokerOrder | undefined> => {
    // Before the window closes its own order may not be at KIS yet while a twin's is: no decision now.
    if (now().getTime() < intent.sentAt.getTime() + lostOrderWindowMs) throw new BrokerUnavailableError(`the order ${clientOrderId} is too recent to be matched among KIS's orders by its details`);
    // KRX trades within one Seoul day: the order is among the orders of the day it was sent.
    const rows = await dailyOrderRows(seoulDate(intent.sentAt));
    const fitting = unlinkedCandidates({ request: intent, sentAt: intent.sentAt }, rows, new Set(), undefined, lostOrderWindowMs);
    const free = await Promise.all(fitting.map(async (row) => ((await links.byBrokerOrderId(kisBrokerOrderId(row.ord_dt, row.odno))) ? undefined : row)));
    const candidates = free.filter((row): row is KisDailyOrderRow => row !== undefined);
    if (candidates.length > 1) {
      const ids = candidates.map((row) => kisBrokerOrderId(row.ord_dt, row.odno));
      throw new BrokerOrderAmbiguousError(`KIS has ${ids.length} unlinked orders that fit the order ${clientOrderId}: ${ids.join(', ')}`, ids);
    }
    const [row] = candidates;
    if (!row) return undefined;
    const link = { clientOrderId, brokerOrderId: kisBrokerOrderId(row.ord_dt, row.odno), orgNo: row.ord_gno_brno, metadata: {} };
    await links.put(link);
    return fromKisRow(row, key, seoulDate(now()), link);
  };

  const listOpenOrders = async (): Promise<BrokerOrder[]> => {
    const rows = (await dailyOrderRows(seoulDate(now()))).filter((row) => !isReviseOrCancelRow(row));
    const orders = await Promise.all(rows.map(orderOf));
    return orders.filter((order) => isWorking(order.status));
  };

  const balance = async (): Promise<{ positions: BrokerPosition[]; answer: KisBalanceAnswer }> => {
    let context = { fk: '', nk: '' };
    const holdings: KisBalanceAnswer['output1'] = [];
    for (let page = 0; page < maxPages; page += 1) {
      const reply = await http.request<KisBalanceAnswer>({
        call: 'balance',
        method: 'GET',
        path: KIS_PATHS.balance,
        trCont: page === 0 ? '' : 'N',
        query: {
          ...accountFields,
          AFHR_FLPR_YN: 'N',
          OFL_YN: '',
          INQR_DVSN: '02',
          UNPR_DVSN: '01',
          FUND_STTL_ICLD_YN: 'N',
          FNCG_AMT_AUTO_RDPT_YN: 'N',
          PRCS_DVSN: '00',
          CTX_AREA_FK100: context.fk,
          CTX_AREA_NK100: context.nk,
        },
      });
      holdings.push(...(reply.body.output1 ?? []));
      // The totals are the same on every page; the last page's are kept.
      if (reply.trCont !== 'M' && reply.trCont !== 'F') return { positions: positionsFromHoldings(holdings), answer: reply.body };
      context = { fk: reply.body.ctx_area_fk100, nk: reply.body.ctx_area_nk100 };
    }
    throw new BrokerUnavailableError(`KIS's balance ran past ${maxPages} pages`);
  };
  const accountOf = (answer: KisBalanceAnswer) => fromKisBalance(answer.output2?.[0], key.mode, now());

  const dailyBars = async (symbol: string, from: string, to: string): Promise<TBar[]> => {
    const start = compactDate(from);
    const bars = new Map<string, TBar>();
    // KIS answers at most 100 rows, newest first: walk back from `to` until `from` is reached.
    for (let end = compactDate(to), page = 0; end >= start && page < maxPages; page += 1) {
      const reply = await http.request<KisDailyChartAnswer>({
        call: 'dailyChart',
        method: 'GET',
        path: KIS_PATHS.dailyChart,
        query: { FID_COND_MRKT_DIV_CODE: 'J', FID_INPUT_ISCD: symbol, FID_INPUT_DATE_1: start, FID_INPUT_DATE_2: end, FID_PERIOD_DIV_CODE: 'D', FID_ORG_ADJ_PRC: '0' },
      });
      // A day without trading comes back as an empty row: skipped.
      const rows = (reply.body.output2 ?? []).filter((row) => /^\d{8}$/.test(row.stck_bsop_date ?? '') && row.stck_bsop_date >= start && row.stck_bsop_date <= end);
      for (const row of rows) bars.set(row.stck_bsop_date, barFromKisChart(row));
      if (rows.length === 0) break;
      const oldest = rows.reduce((min, row) => (row.stck_bsop_date < min ? row.stck_bsop_date : min), end);
      end = dayBefore(oldest);
    }
    return [...bars.values()].sort((a, b) => a.date.localeCompare(b.date));
  };

  return {
    name: KIS_BROKER_NAME,
    assetClass: 'kr_equity',
    mode: key.mode,
    // KIS's cash order holds no stops: the order emulator holds them (DESIGN §6).
    nativeOrderTypes: UNTRIGGERED_ORDER_TYPES,
    nativeOrderClasses: NO_ORDER_CLASSES,
    nativeTrailingLegs: false,
    sellsOnlyHeld: true,
    // KIS's books cannot join our transaction: the order service commits the intent before this call (its remote submission).
    placeOrder: async (request) => {
      // Emulated for a real broker (DESIGN: advanced orders), never sent to it.
      if (request.orderType === 'trailing_stop') throw new BrokerRejectedError('KIS trailing_stop orders are not supported by this adapter');
      const { body, limitPrice } = toKisOrderCash(request, account);
      const reply = await http.request<KisOrderAnswer>({ call: request.side, method: 'POST', path: KIS_PATHS.orderCash, body });
      const at = now();
      const orderDate = seoulDate(at);
      const brokerOrderId = kisBrokerOrderId(orderDate, reply.body.output.ODNO);
      const metadata = { ...request.metadata, kis_order_date: orderDate, kis_odno: reply.body.output.ODNO, kis_org_no: reply.body.output.KRX_FWDG_ORD_ORGNO, kis_order_division: body.ORD_DVSN };
      await links.put({ clientOrderId: request.clientOrderId, brokerOrderId, orgNo: reply.body.output.KRX_FWDG_ORD_ORGNO, metadata: request.metadata ?? {} });
      const submittedAt = reply.body.output.ORD_TMD ? seoulInstant(orderDate, reply.body.output.ORD_TMD) : at;
      return {
        brokerOrderId,
        clientOrderId: request.clientOrderId,
        assetClass: 'kr_equity',
        mode: key.mode,
        symbol: request.symbol,
        side: request.side,
        orderType: request.orderType,
        timeInForce: request.timeInForce,
        qty: body.ORD_QTY,
        filledQty: '0',
        avgFillPrice: null,
        limitPrice,
        stopPrice: null,
        status: 'accepted',
        parentId: null,
        metadata,
        submittedAt,
        updatedAt: at,
      };
    },
    cancelOrder: async ({ brokerOrderId }) => {
      const row = await rowOf(brokerOrderId);
      if (!row) throw new BrokerRejectedError(`KIS has no order ${brokerOrderId}`);
      const order = await orderOf(row);
      if (!isWorking(order.status)) throw new BrokerRejectedError(`KIS order ${brokerOrderId} is ${order.status} and cannot be canceled`);
      const link = await links.byBrokerOrderId(brokerOrderId);
      const body: KisReviseCancelRequest = {
        ...accountFields,
        KRX_FWDG_ORD_ORGNO: row.ord_gno_brno || link?.orgNo || '',
        ORGN_ODNO: row.odno,
        ORD_DVSN: row.ord_dvsn_cd,
        RVSE_CNCL_DVSN_CD: '02',
        // The whole remainder: quantity and price are then ignored, sent as 0.
        ORD_QTY: '0',
        ORD_UNPR: '0',
        QTY_ALL_ORD_YN: 'Y',
        EXCG_ID_DVSN_CD: 'KRX',
      };
      await http.request<KisOrderAnswer>({ call: 'reviseCancel', method: 'POST', path: KIS_PATHS.orderReviseCancel, body });
      // The cancel answers with the cancel's own number: the order as it stands now is read back.
      return (await getByBrokerOrderId(brokerOrderId)) ?? order;
    },
    replaceOrder: () => Promise.reject(new BrokerRejectedError('replacing a KIS order is not supported by this adapter: cancel and place again')),
    getOrder: async (lookup) => {
      if ('brokerOrderId' in lookup) return getByBrokerOrderId(lookup.brokerOrderId);
      const link = await links.byClientOrderId(lookup.clientOrderId);
      if (link) return getByBrokerOrderId(link.brokerOrderId);
      return lookup.intent && findLostOrder(lookup.clientOrderId, lookup.intent);
    },
    listOpenOrders,
    positions: async () => (await balance()).positions,
    account: async () => accountOf((await balance()).answer),
    // The balance carries positions and the account at once: two calls, not three.
    snapshot: async () => {
      const [read, openOrders] = await Promise.all([balance(), listOpenOrders()]);
      return { account: accountOf(read.answer), positions: read.positions, openOrders };
    },
    quote: async (symbol) => {
      const reply = await http.request<KisPriceAnswer>({ call: 'price', method: 'GET', path: KIS_PATHS.price, query: { FID_COND_MRKT_DIV_CODE: 'J', FID_INPUT_ISCD: symbol } });
      const price = reply.body.output?.stck_prpr ?? '';
      // KIS answers an unknown code with an empty or zero price rather than an error at times.
      if (!/^\d+(\.\d+)?$/.test(price) || Number(price) === 0) throw new BrokerRejectedError(`KIS has no price for ${symbol}`);
      return price.replace(/^0+(?=\d)/, '');
    },
    events: (signal) =>
      pollKisEvents(
        {
          key,
          intervalMs: options.pollIntervalMs ?? 2_000,
          readDay: (orderDate) => dailyOrderRows(orderDate),
          clientOrderIdOf: async (brokerOrderId) => (await links.byBrokerOrderId(brokerOrderId))?.clientOrderId ?? '',
          replayToday: options.replayToday ?? false,
          now,
          ...(options.onPoll ? { onPoll: options.onPoll } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        },
        signal,
      ),
    quotes: (symbols, signal) =>
      streamKisQuotes(
        {
          ...quoteHooks,
          url: quotesUrl ?? kisQuoteStreamUrl(origin),
          silenceMs: (quotesSilenceSeconds ?? 30) * 1_000,
          backoff: quotesBackoff ?? { initialMs: 1_000, maxMs: 30_000 },
          approval,
          now,
          ...(options.random ? { random: options.random } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        },
        symbols,
        signal,
      ),
    dailyBars,
    dailyOrderRows: (orderDate) => dailyOrderRows(orderDate),
  };
};
