// Between KIS's wire rows and the project's broker types: order ids (date + order number),
// statuses read from a daily inquiry row, the order request body, positions and the account from
// the balance, bars from the daily chart, fill events from the change between two readings of a
// row, and which failures are refusals. Pure functions; decimal strings throughout.
import type { Decimal } from 'decimal.js';
import { roundToKrxTick } from '../../instruments/ticks.ts';
import type { TBar } from '../../marketdata/bars.ts';
import { ExactDecimal } from '../../decimal.ts';
import { BrokerRejectedError, type BrokerAccount, type BrokerOrder, type BrokerOrderRequest, type BrokerPosition, type TBrokerEvent, type TBrokerOrderStatus, type TTradingMode } from '../types.ts';
import { KIS_MSG, KIS_ORDER_DIVISIONS, type KisBalanceTotals, type KisDailyChartRow, type KisDailyOrderRow, type KisHolding, type KisOrderCashRequest } from './wire.ts';

export const KIS_BROKER_NAME = 'kis';

/** Who the adapter's objects belong to, and the account KIS knows them by. */
export interface KisAccountKey {
  userId: number;
  mode: TTradingMode;
}

/** CANO (8 digits) and ACNT_PRDT_CD (2 digits), the two halves of a KIS account number. */
export interface KisAccountNumber {
  accountNo: string;
  productCode: string;
}

const ZERO = new ExactDecimal(0);
const dec = (text: string | undefined) => (text && text.trim() !== '' ? new ExactDecimal(text.trim()) : ZERO);
/** The shortest decimal text: KIS pads some fields ("71000.0000", "00000010"). */
export const normalDecimal = (text: string | undefined): string => dec(text).toString();

// ---- ids and time ---------------------------------------------------------------------------

/**
 * Our broker order id: the order date and KIS's order number, `YYYYMMDD-ODNO`. KIS numbers orders
 * afresh every day, so the number alone names a different order tomorrow; with the date it is
 * unique for good, and it tells a lookup which day to ask the daily inquiry about.
 */
export const kisBrokerOrderId = (orderDate: string, odno: string) => `${orderDate}-${odno}`;

export const parseKisBrokerOrderId = (brokerOrderId: string): { orderDate: string; odno: string } | undefined => {
  const match = /^(\d{8})-(\d{1,20})$/.exec(brokerOrderId);
  return match ? { orderDate: match[1]!, odno: match[2]! } : undefined;
};

const SEOUL_OFFSET_MS = 9 * 3_600_000;

/** The Korea date (YYYYMMDD) at an instant: KIS's order dates are Korea dates. Korea keeps no DST. */
export const seoulDate = (at: Date): string => new Date(at.getTime() + SEOUL_OFFSET_MS).toISOString().slice(0, 10).replaceAll('-', '');

/** An order date and HHMMSS time, Korea time, as an instant. */
export const seoulInstant = (date: string, time: string): Date => {
  const t = time.padStart(6, '0');
  return new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)}+09:00`);
};

/** `YYYYMMDD` → `YYYY-MM-DD`. */
export const isoDate = (date: string) => `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;

// ---- the order request ----------------------------------------------------------------------

/**
 * The order-cash body for our request, or a refusal for what KIS's cash order cannot carry here:
 * fractional shares, stop orders, brackets and good-till-canceled (every KRX order is a day
 * order). A limit price off the KRX tick grid is put on it here, at the boundary, toward the
 * safe side: a buy rounds down (never pays more than asked), a sell up (never sells for less).
 */
export const toKisOrderCash = (request: BrokerOrderRequest, account: KisAccountNumber): { body: KisOrderCashRequest; limitPrice: string | null } => {
  const qty = dec(request.qty);
  if (!qty.isInteger() || qty.lte(0)) throw new BrokerRejectedError(`KIS takes whole shares: quantity ${request.qty} is not a positive whole number`);
  if (request.orderType === 'stop') throw new BrokerRejectedError('KIS stop orders are not supported by this adapter');
  if (request.bracket) throw new BrokerRejectedError('KIS has no bracket orders');
  if (request.timeInForce === 'gtc') throw new BrokerRejectedError('KIS orders last one trading day: time in force gtc is not available');
  let division: string;
  let limitPrice: Decimal | null = null;
  if (request.orderType === 'market') {
    division = request.timeInForce === 'ioc' ? KIS_ORDER_DIVISIONS.marketIoc : request.timeInForce === 'fok' ? KIS_ORDER_DIVISIONS.marketFok : KIS_ORDER_DIVISIONS.market;
  } else {
    if (request.limitPrice == null) throw new BrokerRejectedError('a limit order needs a limit price');
    const asked = dec(request.limitPrice);
    if (asked.lte(0)) throw new BrokerRejectedError(`limit price ${request.limitPrice} must be positive`);
    limitPrice = roundToKrxTick(asked, request.side === 'buy' ? 'down' : 'up');
    if (limitPrice.lte(0)) throw new BrokerRejectedError(`limit price ${request.limitPrice} is below the smallest KRX tick`);
    division = request.timeInForce === 'ioc' ? KIS_ORDER_DIVISIONS.limitIoc : request.timeInForce === 'fok' ? KIS_ORDER_DIVISIONS.limitFok : KIS_ORDER_DIVISIONS.limit;
  }
  return {
    body: {
      CANO: account.accountNo,
      ACNT_PRDT_CD: account.productCode,
      PDNO: request.symbol,
      ORD_DVSN: division,
      ORD_QTY: qty.toFixed(0),
      // A market order carries price 0: KIS reserves at the upper limit and settles at the fill.
      ORD_UNPR: limitPrice ? limitPrice.toFixed(0) : '0',
      EXCG_ID_DVSN_CD: 'KRX',
    },
    limitPrice: limitPrice ? limitPrice.toString() : null,
  };
};

// ---- daily inquiry rows → orders ------------------------------------------------------------

/** A row that is a revise or cancel request (it names an original order), not an order of its own. */
export const isReviseOrCancelRow = (row: KisDailyOrderRow) => row.cncl_yn === 'Y' || /[1-9]/.test(row.orgn_odno ?? '');

/**
 * Our status from the quantities of a daily inquiry row (KIS gives no status field): everything
 * filled → filled; refused with nothing filled → rejected; nothing left working after a cancel or
 * refusal → canceled (a partial fill stays in `filledQty`); still working on a day before today
 * → expired (every KRX order ends with its day); something filled → partially_filled; else open.
 */
export const statusFromKisRow = (row: KisDailyOrderRow, today: string): TBrokerOrderStatus => {
  const qty = dec(row.ord_qty);
  const filled = dec(row.tot_ccld_qty);
  const canceled = dec(row.cnc_cfrm_qty);
  const refused = dec(row.rjct_qty);
  const remaining = dec(row.rmn_qty);
  if (qty.gt(0) && filled.gte(qty)) return 'filled';
  if (refused.gt(0) && filled.isZero()) return 'rejected';
  if ((canceled.gt(0) || refused.gt(0)) && remaining.isZero()) return 'canceled';
  if (row.ord_dt < today) return 'expired';
  return filled.gt(0) ? 'partially_filled' : 'open';
};

export const isWorking = (status: TBrokerOrderStatus) => status === 'accepted' || status === 'open' || status === 'partially_filled';

const MARKET_DIVISIONS: ReadonlySet<string> = new Set([KIS_ORDER_DIVISIONS.market, KIS_ORDER_DIVISIONS.marketIoc, KIS_ORDER_DIVISIONS.marketFok]);

const timeInForceOfRow = (row: KisDailyOrderRow): BrokerOrder['timeInForce'] => {
  const condition = row.ccld_cndt_name.toUpperCase();
  if (condition.includes('IOC') || row.ord_dvsn_cd === '11' || row.ord_dvsn_cd === '13') return 'ioc';
  if (condition.includes('FOK') || row.ord_dvsn_cd === '12' || row.ord_dvsn_cd === '14') return 'fok';
  return 'day';
};

/** What we know of an order that KIS does not: our client order id and what we kept with it. */
export interface KisOrderLinkView {
  clientOrderId: string;
  metadata?: Record<string, unknown>;
}

export const fromKisRow = (row: KisDailyOrderRow, key: KisAccountKey, today: string, link?: KisOrderLinkView): BrokerOrder => {
  const isMarket = MARKET_DIVISIONS.has(row.ord_dvsn_cd);
  const filled = dec(row.tot_ccld_qty);
  const at = seoulInstant(row.ord_dt, row.ord_tmd);
  return {
    brokerOrderId: kisBrokerOrderId(row.ord_dt, row.odno),
    // KIS keeps no client id: an order placed outside this service has none ('').
    clientOrderId: link?.clientOrderId ?? '',
    assetClass: 'kr_equity',
    mode: key.mode,
    symbol: row.pdno,
    side: row.sll_buy_dvsn_cd === '01' ? 'sell' : 'buy',
    orderType: isMarket ? 'market' : 'limit',
    timeInForce: timeInForceOfRow(row),
    qty: normalDecimal(row.ord_qty),
    filledQty: filled.toString(),
    avgFillPrice: filled.gt(0) ? averageFillPrice(row) : null,
    limitPrice: isMarket ? null : normalDecimal(row.ord_unpr),
    stopPrice: null,
    status: statusFromKisRow(row, today),
    parentId: null,
    metadata: {
      ...link?.metadata,
      kis_order_date: row.ord_dt,
      kis_odno: row.odno,
      kis_org_no: row.ord_gno_brno,
      kis_order_division: row.ord_dvsn_cd,
    },
    submittedAt: at,
    // The inquiry has no time of the last change; the order time is the best it tells.
    updatedAt: at,
  };
};

/** The average fill price: the filled amount over the filled quantity (KIS's avg_prvs is rounded to won). */
export const averageFillPrice = (row: KisDailyOrderRow): string => {
  const filled = dec(row.tot_ccld_qty);
  if (filled.isZero()) return '0';
  const amount = dec(row.tot_ccld_amt);
  return amount.isZero() ? normalDecimal(row.avg_prvs) : amount.dividedBy(filled).toDecimalPlaces(4).toString();
};

// ---- fill events from two readings -----------------------------------------------------------

/** What the poller remembers of an order between two readings. */
export interface KisOrderReading {
  status: TBrokerOrderStatus;
  filledQty: string;
  filledAmount: string;
}

export const readingOf = (row: KisDailyOrderRow, today: string): KisOrderReading => ({
  status: statusFromKisRow(row, today),
  filledQty: dec(row.tot_ccld_qty).toString(),
  filledAmount: dec(row.tot_ccld_amt).toString(),
});

/**
 * The execution id of the fills that brought an order to a cumulative quantity. The inquiry
 * sums an order's executions, so a fill is known by how far it took the order: the same
 * (date, order number, cumulative quantity) is the same fill whoever reads it and however often,
 * which is what the service's de-duplication by execution id needs.
 */
export const kisExecutionId = (brokerOrderId: string, cumulativeQty: string) => `${brokerOrderId}:${cumulativeQty}`;

/**
 * The events between what was last read of an order (undefined: never read) and its row now:
 * `open` the first time a working order is seen, a fill or partial fill for every increase of the
 * filled quantity (its price the increase in amount over the increase in quantity), and the end
 * (canceled, expired, rejected) once. Fees are not in the inquiry: `fee` is '0'.
 */
export const eventsBetween = (previous: KisOrderReading | undefined, row: KisDailyOrderRow, key: KisAccountKey, today: string, clientOrderId: string, at: Date): TBrokerEvent[] => {
  const now = readingOf(row, today);
  const brokerOrderId = kisBrokerOrderId(row.ord_dt, row.odno);
  const base = {
    user_id: key.userId,
    asset_class: 'kr_equity' as const,
    mode: key.mode,
    broker: KIS_BROKER_NAME,
    broker_order_id: brokerOrderId,
    client_order_id: clientOrderId,
    symbol: row.pdno,
    status: now.status,
    filled_qty: now.filledQty,
    avg_fill_price: dec(now.filledQty).gt(0) ? averageFillPrice(row) : null,
    reason: null,
    at: at.toISOString(),
  };
  const events: TBrokerEvent[] = [];
  const before = previous ?? { status: 'accepted', filledQty: '0', filledAmount: '0' };
  if (!previous && (now.status === 'open' || now.status === 'partially_filled')) events.push({ ...base, status: 'open', type: 'open', fill: null });
  const addedQty = dec(now.filledQty).minus(dec(before.filledQty));
  if (addedQty.gt(0)) {
    const addedAmount = dec(now.filledAmount).minus(dec(before.filledAmount));
    const price = addedAmount.gt(0) ? addedAmount.dividedBy(addedQty).toDecimalPlaces(4).toString() : normalDecimal(row.avg_prvs);
    events.push({
      ...base,
      type: now.status === 'filled' ? 'fill' : 'partial_fill',
      fill: { execution_id: kisExecutionId(brokerOrderId, now.filledQty), qty: addedQty.toString(), price, fee: '0' },
    });
  }
  if (before.status !== now.status && (now.status === 'canceled' || now.status === 'expired' || now.status === 'rejected')) {
    events.push({ ...base, type: now.status, fill: null, reason: now.status === 'rejected' ? 'refused by KIS' : null });
  }
  return events;
};

// ---- balance → positions and account ----------------------------------------------------------

export const fromKisHolding = (holding: KisHolding): BrokerPosition => ({
  symbol: holding.pdno,
  qty: normalDecimal(holding.hldg_qty),
  avgEntryPrice: normalDecimal(holding.pchs_avg_pric),
  currentPrice: normalDecimal(holding.prpr),
  // The balance reports the open holding's evaluation only.
  realizedPnl: '0',
  currency: 'KRW',
});

/** Holdings with shares: a holding sold out today stays in the balance at 0 for two days. */
export const positionsFromHoldings = (holdings: readonly KisHolding[]): BrokerPosition[] => holdings.filter((holding) => dec(holding.hldg_qty).gt(0)).map(fromKisHolding);

/**
 * Cash is the D+2 settled cash (the deposit after today's trades settle: what KRX's T+2
 * settlement will leave), equity the total evaluation, buying power the D+2 cash too (KIS's
 * orderable amount needs another call; KIS refuses an order beyond it anyway).
 */
export const fromKisBalance = (totals: KisBalanceTotals | undefined, mode: TTradingMode, asOf: Date): BrokerAccount => ({
  broker: KIS_BROKER_NAME,
  paper: mode === 'paper',
  currency: 'KRW',
  cash: normalDecimal(totals?.prvs_rcdl_excc_amt),
  equity: normalDecimal(totals?.tot_evlu_amt),
  buyingPower: normalDecimal(totals?.prvs_rcdl_excc_amt),
  asOf,
});

export const barFromKisChart = (row: KisDailyChartRow): TBar => ({
  date: isoDate(row.stck_bsop_date),
  open: normalDecimal(row.stck_oprc),
  high: normalDecimal(row.stck_hgpr),
  low: normalDecimal(row.stck_lwpr),
  close: normalDecimal(row.stck_clpr),
  volume: normalDecimal(row.acml_vol),
});

// ---- failures --------------------------------------------------------------------------------

/** What the client does with a failed answer. */
export type TKisFailure = 'rate_limited' | 'token_rejected' | 'refused' | 'unavailable';

/**
 * A failed answer's class, by KIS's msg_cd first (KIS sends most of its refusals, and its rate
 * limit, with HTTP 500), then by the status: too many requests → back off and retry; a token KIS
 * no longer takes → renew once and retry; 5xx without a KIS message, or no answer at all →
 * unavailable; any other answer carrying KIS's rt_cd/msg1 → a refusal with that message.
 */
export const classifyKisFailure = (httpStatus: number, msgCd: string | undefined, hasKisMessage: boolean): TKisFailure => {
  if (msgCd === KIS_MSG.rateLimited || httpStatus === 429) return 'rate_limited';
  if (msgCd === KIS_MSG.tokenExpired || msgCd === KIS_MSG.tokenInvalid) return 'token_rejected';
  if (httpStatus === 401) return 'token_rejected';
  if (httpStatus >= 500 && !hasKisMessage) return 'unavailable';
  if (httpStatus >= 502) return 'unavailable';
  return hasKisMessage || (httpStatus >= 400 && httpStatus < 500) ? 'refused' : 'unavailable';
};
