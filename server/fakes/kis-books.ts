// The fake KIS's books: accounts by app key and account number, their cash, holdings and the
// day's orders as KIS's daily inquiry shows them (one row per order with its fills summed), and
// the matching that fills market orders at the set price and rests limit orders until the price
// crosses. Order numbers start again each day, as KIS's do. Refusals carry KIS-style msg_cd and
// msg1 (the codes are the fake's own where KIS's exact ones are not needed).
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';
import { seoulDate } from '../brokers/kis/mapping.ts';
import type { KisBalanceTotals, KisDailyChartRow, KisDailyOrderRow, KisHolding, KisOrderCashRequest, KisOrderOutput, KisReviseCancelRequest } from '../brokers/kis/wire.ts';

/** A refusal as KIS answers it: rt_cd '1' with msg_cd and msg1, on HTTP `status` (KIS uses 500 for most). */
export class FakeKisRefusal extends Error {
  readonly msgCd: string;
  readonly status: number;
  constructor(msgCd: string, message: string, status = 500) {
    super(message);
    this.msgCd = msgCd;
    this.status = status;
  }
}

export const FAKE_KIS_REFUSALS = {
  funds: () => new FakeKisRefusal('APBK0952', '주문가능금액을 초과 했습니다'),
  oversold: () => new FakeKisRefusal('APBK0400', '주문 가능한 수량을 초과하였습니다.'),
  unknownSymbol: (symbol: string) => new FakeKisRefusal('APBK1680', `종목코드(${symbol})가 올바르지 않습니다.`),
  nothingToCancel: () => new FakeKisRefusal('APBK0918', '정정/취소할 수량이 없습니다.'),
  unknownOrder: () => new FakeKisRefusal('APBK0915', '원주문번호가 존재하지 않습니다.'),
  badInput: (field: string) => new FakeKisRefusal('OPSQ2001', `ERROR : INPUT_FIELD_NAME ${field}`),
} as const;

export interface FakeKisAccountSeed {
  appKey: string;
  appSecret: string;
  /** CANO, 8 digits. */
  accountNo: string;
  /** ACNT_PRDT_CD, 2 digits. Default '01'. */
  productCode?: string;
  /** Starting cash in KRW. Default 100000000. */
  cash?: string;
}

interface FakeOrder {
  row: KisDailyOrderRow;
  side: 'buy' | 'sell';
  limit: Decimal | null;
}

interface FakeKisAccount {
  seed: Required<FakeKisAccountSeed>;
  cash: Decimal;
  holdings: Map<string, { qty: Decimal; cost: Decimal }>;
  /** Order date → that day's orders and revise/cancel rows, in order. */
  days: Map<string, FakeOrder[]>;
}

const ZERO = new ExactDecimal(0);
const d = (text: string) => new ExactDecimal(text || '0');
/** HHMMSS in Korea time, as KIS writes times of day. */
export const hhmmss = (at: Date) => new Date(at.getTime() + 9 * 3_600_000).toISOString().slice(11, 19).replaceAll(':', '');
const accountId = (accountNo: string, productCode: string) => `${accountNo}-${productCode}`;

export const createFakeKisBooks = (now: () => Date = () => new Date()) => {
  const accounts = new Map<string, FakeKisAccount>();
  const prices = new Map<string, Decimal>();
  const bars = new Map<string, KisDailyChartRow[]>();
  /** Told every price set (the fake's real-time stream sends each to its subscribers). */
  const priceListeners = new Set<(symbol: string, price: string) => void>();
  /** The branch number every fake order is forwarded under. */
  const ORG_NO = '91252';

  const accountOf = (accountNo: string, productCode: string): FakeKisAccount | undefined => accounts.get(accountId(accountNo, productCode));

  const dayOf = (account: FakeKisAccount, date: string) => {
    let orders = account.days.get(date);
    if (!orders) account.days.set(date, (orders = []));
    return orders;
  };

  /** Each day's numbers start at 1 again: the same ODNO names different orders on different days. */
  const nextOdno = (account: FakeKisAccount, date: string) => String(dayOf(account, date).length + 1).padStart(10, '0');

  // Only today's orders hold cash or shares: an order ends with its day.
  const reservedForBuys = (account: FakeKisAccount) => {
    let reserved = ZERO;
    for (const order of account.days.get(seoulDate(now())) ?? []) if (order.side === 'buy' && order.row.cncl_yn !== 'Y') reserved = reserved.plus(d(order.row.rmn_qty).times(order.limit ?? prices.get(order.row.pdno) ?? ZERO));
    return reserved;
  };
  const heldFor = (account: FakeKisAccount, symbol: string) => {
    let pending = ZERO;
    for (const order of account.days.get(seoulDate(now())) ?? []) if (order.side === 'sell' && order.row.pdno === symbol && order.row.cncl_yn !== 'Y') pending = pending.plus(d(order.row.rmn_qty));
    return (account.holdings.get(symbol)?.qty ?? ZERO).minus(pending);
  };

  const execute = (account: FakeKisAccount, order: FakeOrder, qty: Decimal, price: Decimal) => {
    const row = order.row;
    row.tot_ccld_qty = d(row.tot_ccld_qty).plus(qty).toString();
    row.tot_ccld_amt = d(row.tot_ccld_amt).plus(qty.times(price)).toString();
    row.avg_prvs = d(row.tot_ccld_amt).dividedBy(d(row.tot_ccld_qty)).toDecimalPlaces(0).toString();
    row.rmn_qty = d(row.rmn_qty).minus(qty).toString();
    const holding = account.holdings.get(row.pdno) ?? { qty: ZERO, cost: ZERO };
    if (order.side === 'buy') {
      account.cash = account.cash.minus(qty.times(price));
      account.holdings.set(row.pdno, { qty: holding.qty.plus(qty), cost: holding.cost.plus(qty.times(price)) });
    } else {
      account.cash = account.cash.plus(qty.times(price));
      const left = holding.qty.minus(qty);
      // The average purchase price stays; the cost shrinks with the quantity.
      account.holdings.set(row.pdno, { qty: left, cost: holding.qty.isZero() ? ZERO : holding.cost.times(left).dividedBy(holding.qty) });
    }
  };

  const crosses = (order: FakeOrder, price: Decimal) => !order.limit || (order.side === 'buy' ? price.lte(order.limit) : price.gte(order.limit));

  /** Fills whatever rests and now crosses, at its limit (a resting order trades at its own price). */
  const match = (symbol: string) => {
    const price = prices.get(symbol);
    if (!price) return;
    const today = seoulDate(now());
    for (const account of accounts.values())
      for (const order of account.days.get(today) ?? [])
        if (order.row.pdno === symbol && order.row.cncl_yn !== 'Y' && d(order.row.rmn_qty).gt(0) && crosses(order, price)) execute(account, order, d(order.row.rmn_qty), order.limit ?? price);
  };

  return {
    addAccount: (seed: FakeKisAccountSeed) => {
      const full = { productCode: '01', cash: '100000000', ...seed };
      accounts.set(accountId(full.accountNo, full.productCode), { seed: full, cash: d(full.cash), holdings: new Map(), days: new Map() });
    },
    /** The account's app key, to check a request's headers against. */
    appKeyOf: (accountNo: string, productCode: string) => accountOf(accountNo, productCode)?.seed.appKey,
    secretOf: (appKey: string) => [...accounts.values()].find((account) => account.seed.appKey === appKey)?.seed.appSecret,
    setPrice: (symbol: string, price: string) => {
      prices.set(symbol, d(price));
      match(symbol);
      for (const listener of priceListeners) listener(symbol, d(price).toString());
    },
    /** Calls `listener` with every price set from now on; the answer stops it. */
    onPrice: (listener: (symbol: string, price: string) => void) => {
      priceListeners.add(listener);
      return () => void priceListeners.delete(listener);
    },
    priceOf: (symbol: string) => prices.get(symbol),
    setBars: (symbol: string, rows: KisDailyChartRow[]) => void bars.set(symbol, rows),

    place: (accountNo: string, productCode: string, side: 'buy' | 'sell', body: KisOrderCashRequest): KisOrderOutput => {
      const account = accountOf(accountNo, productCode);
      if (!account) throw FAKE_KIS_REFUSALS.badInput('CANO');
      const price = prices.get(body.PDNO);
      if (!price) throw FAKE_KIS_REFUSALS.unknownSymbol(body.PDNO);
      if (!/^[1-9]\d*$/.test(body.ORD_QTY)) throw FAKE_KIS_REFUSALS.badInput('ORD_QTY');
      if (!/^\d+$/.test(body.ORD_UNPR)) throw FAKE_KIS_REFUSALS.badInput('ORD_UNPR');
      const division = body.ORD_DVSN;
      const isMarket = division === '01' || division === '13' || division === '14';
      if (!isMarket && !['00', '11', '12'].includes(division)) throw FAKE_KIS_REFUSALS.badInput('ORD_DVSN');
      const qty = d(body.ORD_QTY);
      const limit = isMarket ? null : d(body.ORD_UNPR);
      if (limit?.lte(0)) throw FAKE_KIS_REFUSALS.badInput('ORD_UNPR');
      if (side === 'buy' && account.cash.minus(reservedForBuys(account)).lt(qty.times(limit ?? price))) throw FAKE_KIS_REFUSALS.funds();
      if (side === 'sell' && heldFor(account, body.PDNO).lt(qty)) throw FAKE_KIS_REFUSALS.oversold();
      const at = now();
      const date = seoulDate(at);
      const odno = nextOdno(account, date);
      const order: FakeOrder = {
        side,
        limit,
        row: {
          ord_dt: date,
          ord_gno_brno: ORG_NO,
          odno,
          orgn_odno: '',
          ord_dvsn_name: isMarket ? '시장가' : '지정가',
          sll_buy_dvsn_cd: side === 'sell' ? '01' : '02',
          sll_buy_dvsn_cd_name: side === 'sell' ? '현금매도' : '현금매수',
          pdno: body.PDNO,
          prdt_name: body.PDNO,
          ord_qty: body.ORD_QTY,
          ord_unpr: body.ORD_UNPR,
          ord_tmd: hhmmss(at),
          tot_ccld_qty: '0',
          avg_prvs: '0',
          cncl_yn: 'N',
          tot_ccld_amt: '0',
          ord_dvsn_cd: division,
          cnc_cfrm_qty: '0',
          rmn_qty: body.ORD_QTY,
          rjct_qty: '0',
          ccld_cndt_name: division === '11' || division === '13' ? 'IOC' : division === '12' || division === '14' ? 'FOK' : '없음',
          excg_id_dvsn_cd: 'KRX',
        },
      };
      dayOf(account, date).push(order);
      if (crosses(order, price)) execute(account, order, qty, price);
      else if (division !== '00') {
        // IOC / FOK that cannot trade at once: the exchange cancels it.
        order.row.cnc_cfrm_qty = order.row.rmn_qty;
        order.row.rmn_qty = '0';
      }
      return { KRX_FWDG_ORD_ORGNO: ORG_NO, ODNO: odno, ORD_TMD: order.row.ord_tmd };
    },

    cancel: (accountNo: string, productCode: string, body: KisReviseCancelRequest): KisOrderOutput => {
      const account = accountOf(accountNo, productCode);
      if (!account) throw FAKE_KIS_REFUSALS.badInput('CANO');
      if (body.RVSE_CNCL_DVSN_CD !== '02') throw FAKE_KIS_REFUSALS.badInput('RVSE_CNCL_DVSN_CD');
      const at = now();
      const date = seoulDate(at);
      const order = dayOf(account, date).find((candidate) => candidate.row.odno === body.ORGN_ODNO && candidate.row.cncl_yn !== 'Y');
      if (!order || body.KRX_FWDG_ORD_ORGNO !== ORG_NO) throw FAKE_KIS_REFUSALS.unknownOrder();
      const remaining = d(order.row.rmn_qty);
      if (remaining.isZero()) throw FAKE_KIS_REFUSALS.nothingToCancel();
      const qty = body.QTY_ALL_ORD_YN === 'Y' ? remaining : ExactDecimal.min(remaining, d(body.ORD_QTY));
      order.row.cnc_cfrm_qty = d(order.row.cnc_cfrm_qty).plus(qty).toString();
      order.row.rmn_qty = remaining.minus(qty).toString();
      const odno = nextOdno(account, date);
      // The cancel is an order row of its own, naming the original.
      dayOf(account, date).push({ side: order.side, limit: null, row: { ...order.row, odno, orgn_odno: order.row.odno, cncl_yn: 'Y', ord_qty: qty.toString(), tot_ccld_qty: '0', tot_ccld_amt: '0', rmn_qty: '0', cnc_cfrm_qty: qty.toString(), ord_tmd: hhmmss(at) } });
      return { KRX_FWDG_ORD_ORGNO: ORG_NO, ODNO: odno, ORD_TMD: hhmmss(at) };
    },

    /** Fills part of a resting order at a price (a partial fill KIS would report). */
    fillPart: (accountNo: string, productCode: string, odno: string, qty: string, price: string) => {
      const account = accountOf(accountNo, productCode)!;
      const order = dayOf(account, seoulDate(now())).find((candidate) => candidate.row.odno === odno && candidate.row.cncl_yn !== 'Y')!;
      execute(account, order, d(qty), d(price));
    },

    dailyRows: (accountNo: string, productCode: string, date: string, odno: string): KisDailyOrderRow[] => {
      const account = accountOf(accountNo, productCode);
      if (!account) throw FAKE_KIS_REFUSALS.badInput('CANO');
      return (account.days.get(date) ?? []).map((order) => ({ ...order.row })).filter((row) => !odno || row.odno === odno);
    },

    balance: (accountNo: string, productCode: string): { holdings: KisHolding[]; totals: KisBalanceTotals } => {
      const account = accountOf(accountNo, productCode);
      if (!account) throw FAKE_KIS_REFUSALS.badInput('CANO');
      let evaluation = ZERO;
      let cost = ZERO;
      const holdings: KisHolding[] = [];
      for (const [symbol, holding] of account.holdings) {
        const price = prices.get(symbol) ?? ZERO;
        const value = holding.qty.times(price);
        evaluation = evaluation.plus(value);
        cost = cost.plus(holding.cost);
        holdings.push({
          pdno: symbol,
          prdt_name: symbol,
          hldg_qty: holding.qty.toString(),
          ord_psbl_qty: heldFor(account, symbol).toString(),
          // KIS pads this one: "71000.0000".
          pchs_avg_pric: holding.qty.isZero() ? '0.0000' : holding.cost.dividedBy(holding.qty).toFixed(4),
          pchs_amt: holding.cost.toFixed(0),
          prpr: price.toFixed(0),
          evlu_amt: value.toFixed(0),
          evlu_pfls_amt: value.minus(holding.cost).toFixed(0),
        });
      }
      const cash = account.cash.toFixed(0);
      return {
        holdings,
        totals: {
          dnca_tot_amt: cash,
          nxdy_excc_amt: cash,
          prvs_rcdl_excc_amt: cash,
          scts_evlu_amt: evaluation.toFixed(0),
          tot_evlu_amt: account.cash.plus(evaluation).toFixed(0),
          nass_amt: account.cash.plus(evaluation).toFixed(0),
          pchs_amt_smtl_amt: cost.toFixed(0),
          evlu_amt_smtl_amt: evaluation.toFixed(0),
          evlu_pfls_smtl_amt: evaluation.minus(cost).toFixed(0),
        },
      };
    },

    /** The daily chart between two dates, newest first, at most 100 rows, as KIS answers it. */
    chart: (symbol: string, from: string, to: string): KisDailyChartRow[] =>
      (bars.get(symbol) ?? [])
        .filter((row) => row.stck_bsop_date >= from && row.stck_bsop_date <= to)
        .sort((a, b) => b.stck_bsop_date.localeCompare(a.stck_bsop_date))
        .slice(0, 100),
  };
};

export type FakeKisBooks = ReturnType<typeof createFakeKisBooks>;
