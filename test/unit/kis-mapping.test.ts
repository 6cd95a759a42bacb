// The KIS adapter's pure parts: order ids, statuses read from the daily inquiry's quantities,
// the order body (tick rounding, order divisions, refusals), fill events between two readings,
// the balance, failure classes, token freshness and the reconciler's candidates.
import { describe, expect, it } from 'vitest';
import { unlinkedCandidates } from '../../server/brokers/kis/links.ts';
import {
  averageFillPrice,
  classifyKisFailure,
  eventsBetween,
  fromKisBalance,
  fromKisRow,
  isReviseOrCancelRow,
  kisBrokerOrderId,
  parseKisBrokerOrderId,
  positionsFromHoldings,
  readingOf,
  seoulDate,
  statusFromKisRow,
  toKisOrderCash,
  type TKisFailure,
} from '../../server/brokers/kis/mapping.ts';
import { parseKisExpiry, tokenFreshness } from '../../server/brokers/kis/token.ts';
import type { KisDailyOrderRow, KisHolding } from '../../server/brokers/kis/wire.ts';
import { BrokerRejectedError, type BrokerOrderRequest, type TBrokerOrderStatus } from '../../server/brokers/types.ts';

const TODAY = '20250612';
const KEY = { userId: 3, mode: 'paper' as const };
const ACCOUNT = { accountNo: '50012345', productCode: '01' };

const row = (fields: Partial<KisDailyOrderRow> = {}): KisDailyOrderRow => ({
  ord_dt: TODAY,
  ord_gno_brno: '91252',
  odno: '0000000007',
  orgn_odno: '',
  ord_dvsn_name: '지정가',
  sll_buy_dvsn_cd: '02',
  sll_buy_dvsn_cd_name: '현금매수',
  pdno: '005930',
  prdt_name: '삼성전자',
  ord_qty: '10',
  ord_unpr: '71000',
  ord_tmd: '091502',
  tot_ccld_qty: '0',
  avg_prvs: '0',
  cncl_yn: 'N',
  tot_ccld_amt: '0',
  ord_dvsn_cd: '00',
  cnc_cfrm_qty: '0',
  rmn_qty: '10',
  rjct_qty: '0',
  ccld_cndt_name: '없음',
  ...fields,
});

const request = (fields: Partial<BrokerOrderRequest> = {}): BrokerOrderRequest => ({ clientOrderId: 'c1', symbol: '005930', side: 'buy', qty: '10', orderType: 'market', timeInForce: 'day', ...fields });

describe('order ids and dates', () => {
  it('names an order by its date and number, and reads the name back', () => {
    expect(kisBrokerOrderId('20250612', '0000000007')).toBe('20250612-0000000007');
    expect(parseKisBrokerOrderId('20250612-0000000007')).toEqual({ orderDate: '20250612', odno: '0000000007' });
    for (const bad of ['0000000007', '2025-06-12-7', '20250612-', 'x20250612-1']) expect(parseKisBrokerOrderId(bad)).toBeUndefined();
  });

  it('takes the order date in Korea time: 15:00 UTC is midnight in Seoul', () => {
    expect(seoulDate(new Date('2025-06-12T14:59:59Z'))).toBe('20250612');
    expect(seoulDate(new Date('2025-06-12T15:00:00Z'))).toBe('20250613');
  });
});

describe('statuses from a daily inquiry row', () => {
  const cases: Array<[string, Partial<KisDailyOrderRow>, TBrokerOrderStatus]> = [
    ['nothing filled, all working', {}, 'open'],
    ['some filled, the rest working', { tot_ccld_qty: '4', tot_ccld_amt: '284000', rmn_qty: '6' }, 'partially_filled'],
    ['everything filled', { tot_ccld_qty: '10', tot_ccld_amt: '710000', rmn_qty: '0' }, 'filled'],
    ['canceled with nothing filled', { cnc_cfrm_qty: '10', rmn_qty: '0' }, 'canceled'],
    ['canceled after a partial fill', { tot_ccld_qty: '4', cnc_cfrm_qty: '6', rmn_qty: '0' }, 'canceled'],
    ['refused with nothing filled', { rjct_qty: '10', rmn_qty: '0' }, 'rejected'],
    ['refused after a partial fill', { tot_ccld_qty: '4', rjct_qty: '6', rmn_qty: '0' }, 'canceled'],
    ['still working on a past day', { ord_dt: '20250611' }, 'expired'],
    ['partly filled on a past day', { ord_dt: '20250611', tot_ccld_qty: '4', rmn_qty: '6' }, 'expired'],
    ['filled on a past day', { ord_dt: '20250611', tot_ccld_qty: '10', rmn_qty: '0' }, 'filled'],
    ['a cancel still pending (no confirmation yet)', { cnc_cfrm_qty: '0', rmn_qty: '10' }, 'open'],
  ];
  it.each(cases)('%s', (_what, fields, status) => expect(statusFromKisRow(row(fields), TODAY)).toBe(status));

  it('reads a row as our order: market or limit, side, time in force, the average from the amounts', () => {
    const order = fromKisRow(row({ tot_ccld_qty: '3', tot_ccld_amt: '213100', avg_prvs: '71033', rmn_qty: '7' }), KEY, TODAY, { clientOrderId: 'c1', metadata: { report_uuid: 'r' } });
    expect(order).toMatchObject({
      brokerOrderId: '20250612-0000000007',
      clientOrderId: 'c1',
      assetClass: 'kr_equity',
      side: 'buy',
      orderType: 'limit',
      timeInForce: 'day',
      qty: '10',
      filledQty: '3',
      avgFillPrice: '71033.3333',
      limitPrice: '71000',
      status: 'partially_filled',
      metadata: { report_uuid: 'r', kis_odno: '0000000007', kis_org_no: '91252' },
    });
    expect(order.submittedAt.toISOString()).toBe('2025-06-12T00:15:02.000Z');
    expect(fromKisRow(row({ ord_dvsn_cd: '13', sll_buy_dvsn_cd: '01', ord_unpr: '0' }), KEY, TODAY)).toMatchObject({ orderType: 'market', side: 'sell', timeInForce: 'ioc', limitPrice: null, clientOrderId: '' });
    expect(fromKisRow(row({ ord_dvsn_cd: '12', ccld_cndt_name: 'FOK' }), KEY, TODAY).timeInForce).toBe('fok');
  });

  it('tells revise and cancel rows from orders', () => {
    expect(isReviseOrCancelRow(row())).toBe(false);
    expect(isReviseOrCancelRow(row({ orgn_odno: '0000000000' }))).toBe(false);
    expect(isReviseOrCancelRow(row({ orgn_odno: '0000000003' }))).toBe(true);
    expect(isReviseOrCancelRow(row({ cncl_yn: 'Y' }))).toBe(true);
  });

  it('falls back on avg_prvs when the amount is missing', () => {
    expect(averageFillPrice(row({ tot_ccld_qty: '2', tot_ccld_amt: '', avg_prvs: '70500' }))).toBe('70500');
  });
});

describe('the order body', () => {
  it('sends a market order as division 01 at price 0, quantities as whole-number strings', () => {
    expect(toKisOrderCash(request(), ACCOUNT)).toEqual({
      body: { CANO: '50012345', ACNT_PRDT_CD: '01', PDNO: '005930', ORD_DVSN: '01', ORD_QTY: '10', ORD_UNPR: '0', EXCG_ID_DVSN_CD: 'KRX' },
      limitPrice: null,
    });
    expect(toKisOrderCash(request({ qty: '10.000' }), ACCOUNT).body.ORD_QTY).toBe('10');
  });

  it('puts a limit price on the KRX grid toward the safe side: buys down, sells up', () => {
    // 71,050 lies between the 100-won ticks of the 50,000–200,000 band.
    expect(toKisOrderCash(request({ orderType: 'limit', limitPrice: '71050' }), ACCOUNT)).toMatchObject({ body: { ORD_DVSN: '00', ORD_UNPR: '71000' }, limitPrice: '71000' });
    expect(toKisOrderCash(request({ side: 'sell', orderType: 'limit', limitPrice: '71050' }), ACCOUNT)).toMatchObject({ body: { ORD_UNPR: '71100' }, limitPrice: '71100' });
    expect(toKisOrderCash(request({ orderType: 'limit', limitPrice: '1999.5' }), ACCOUNT).body.ORD_UNPR).toBe('1999');
    expect(toKisOrderCash(request({ orderType: 'limit', limitPrice: '71000' }), ACCOUNT).body.ORD_UNPR).toBe('71000');
  });

  it('maps ioc and fok to their divisions', () => {
    expect(toKisOrderCash(request({ orderType: 'limit', limitPrice: '70000', timeInForce: 'ioc' }), ACCOUNT).body.ORD_DVSN).toBe('11');
    expect(toKisOrderCash(request({ orderType: 'limit', limitPrice: '70000', timeInForce: 'fok' }), ACCOUNT).body.ORD_DVSN).toBe('12');
    expect(toKisOrderCash(request({ timeInForce: 'ioc' }), ACCOUNT).body.ORD_DVSN).toBe('13');
    expect(toKisOrderCash(request({ timeInForce: 'fok' }), ACCOUNT).body.ORD_DVSN).toBe('14');
  });

  it('refuses what a cash order cannot carry', () => {
    const refused: Array<Partial<BrokerOrderRequest>> = [
      { qty: '1.5' },
      { qty: '0' },
      { orderType: 'stop', stopPrice: '70000' },
      { orderType: 'limit', limitPrice: null },
      { orderType: 'limit', limitPrice: '0.5' },
      { orderType: 'limit', limitPrice: '-1' },
      { timeInForce: 'gtc' },
      { bracket: { takeProfit: '80000', stopLoss: '60000', stopLossLimit: null } },
    ];
    for (const fields of refused) expect(() => toKisOrderCash(request(fields), ACCOUNT), JSON.stringify(fields)).toThrow(BrokerRejectedError);
  });
});

describe('events between two readings', () => {
  const at = new Date('2025-06-12T01:00:00Z');
  const types = (events: ReturnType<typeof eventsBetween>) => events.map((event) => event.type);

  it('reports a working order once as open, and nothing while it does not change', () => {
    const first = row();
    expect(types(eventsBetween(undefined, first, KEY, TODAY, 'c1', at))).toEqual(['open']);
    expect(eventsBetween(readingOf(first, TODAY), first, KEY, TODAY, 'c1', at)).toEqual([]);
  });

  it('reports each increase of the filled quantity as one fill, priced from the increase in amount', () => {
    const open = row();
    const partly = row({ tot_ccld_qty: '4', tot_ccld_amt: '284000', rmn_qty: '6' });
    const done = row({ tot_ccld_qty: '10', tot_ccld_amt: '710600', rmn_qty: '0' });
    const partial = eventsBetween(readingOf(open, TODAY), partly, KEY, TODAY, 'c1', at);
    expect(partial).toEqual([
      expect.objectContaining({ type: 'partial_fill', status: 'partially_filled', filled_qty: '4', avg_fill_price: '71000', fill: { execution_id: '20250612-0000000007:4', qty: '4', price: '71000', fee: '0' } }),
    ]);
    const fill = eventsBetween(readingOf(partly, TODAY), done, KEY, TODAY, 'c1', at);
    // 426,600 for 6 more shares: 71,100 each.
    expect(fill).toEqual([expect.objectContaining({ type: 'fill', status: 'filled', filled_qty: '10', avg_fill_price: '71060', fill: { execution_id: '20250612-0000000007:10', qty: '6', price: '71100', fee: '0' } })]);
    expect(eventsBetween(readingOf(done, TODAY), done, KEY, TODAY, 'c1', at)).toEqual([]);
  });

  it('reports an order first seen filled as its fill alone, with the client id given', () => {
    const events = eventsBetween(undefined, row({ tot_ccld_qty: '10', tot_ccld_amt: '710000', rmn_qty: '0' }), KEY, TODAY, 'c9', at);
    expect(events).toEqual([expect.objectContaining({ type: 'fill', client_order_id: 'c9', broker: 'kis', user_id: 3, asset_class: 'kr_equity', mode: 'paper', at: at.toISOString() })]);
  });

  it('reports the end of an order once: canceled (after a partial fill), rejected, expired', () => {
    const working = row({ tot_ccld_qty: '4', tot_ccld_amt: '284000', rmn_qty: '6' });
    const canceled = row({ tot_ccld_qty: '4', tot_ccld_amt: '284000', cnc_cfrm_qty: '6', rmn_qty: '0' });
    expect(types(eventsBetween(readingOf(working, TODAY), canceled, KEY, TODAY, 'c1', at))).toEqual(['canceled']);
    expect(eventsBetween(readingOf(canceled, TODAY), canceled, KEY, TODAY, 'c1', at)).toEqual([]);
    expect(eventsBetween(undefined, row({ rjct_qty: '10', rmn_qty: '0' }), KEY, TODAY, 'c1', at)).toEqual([expect.objectContaining({ type: 'rejected', reason: 'refused by KIS' })]);
    // Yesterday's order read on the next day: it ended with its day.
    const yesterday = row({ ord_dt: '20250611' });
    expect(types(eventsBetween(readingOf(yesterday, '20250611'), yesterday, KEY, TODAY, 'c1', at))).toEqual(['expired']);
  });
});

describe('the balance', () => {
  const holding = (fields: Partial<KisHolding>): KisHolding => ({ pdno: '005930', prdt_name: '삼성전자', hldg_qty: '3', ord_psbl_qty: '3', pchs_avg_pric: '71000.0000', pchs_amt: '213000', prpr: '72000', evlu_amt: '216000', evlu_pfls_amt: '3000', ...fields });

  it('keeps holdings with shares, in plain decimals', () => {
    expect(positionsFromHoldings([holding({}), holding({ pdno: '000660', hldg_qty: '0' }), holding({ pdno: '035420', hldg_qty: '2', pchs_avg_pric: '199950.5000' })])).toEqual([
      { symbol: '005930', qty: '3', avgEntryPrice: '71000', currentPrice: '72000', realizedPnl: '0', currency: 'KRW' },
      { symbol: '035420', qty: '2', avgEntryPrice: '199950.5', currentPrice: '72000', realizedPnl: '0', currency: 'KRW' },
    ]);
  });

  it('reads cash and buying power from the D+2 cash and equity from the total evaluation', () => {
    const asOf = new Date('2025-06-12T01:00:00Z');
    const totals = { dnca_tot_amt: '10000000', nxdy_excc_amt: '9800000', prvs_rcdl_excc_amt: '9787000', scts_evlu_amt: '216000', tot_evlu_amt: '10003000', nass_amt: '10003000', pchs_amt_smtl_amt: '213000', evlu_amt_smtl_amt: '216000', evlu_pfls_smtl_amt: '3000' };
    expect(fromKisBalance(totals, 'live', asOf)).toEqual({ broker: 'kis', paper: false, currency: 'KRW', cash: '9787000', equity: '10003000', buyingPower: '9787000', asOf });
    expect(fromKisBalance(undefined, 'paper', asOf)).toMatchObject({ cash: '0', equity: '0' });
  });
});

describe('failure classes', () => {
  const cases: Array<[number, string | undefined, boolean, TKisFailure]> = [
    [500, 'EGW00201', true, 'rate_limited'],
    [429, undefined, false, 'rate_limited'],
    [500, 'EGW00123', true, 'token_rejected'],
    [500, 'EGW00121', true, 'token_rejected'],
    [401, undefined, false, 'token_rejected'],
    [200, 'APBK0952', true, 'refused'],
    [500, 'APBK0952', true, 'refused'],
    [403, 'EGW00105', true, 'refused'],
    [404, undefined, false, 'refused'],
    [500, undefined, false, 'unavailable'],
    [502, undefined, false, 'unavailable'],
    [503, 'EGW00001', true, 'unavailable'],
  ];
  it.each(cases)('HTTP %i with msg_cd %s (a KIS body: %s) is %s', (status, msgCd, hasKisMessage, expected) => expect(classifyKisFailure(status, msgCd, hasKisMessage)).toBe(expected));
});

describe('token freshness', () => {
  const token = { accessToken: 't', issuedAt: 0, expiresAt: 86_400_000 };
  it('is fresh until the renewal margin, due for renewal inside it, expired after', () => {
    const tenMinutes = 600_000;
    expect(tokenFreshness(undefined, 0, tenMinutes)).toBe('missing');
    expect(tokenFreshness(token, 86_400_000 - tenMinutes - 1, tenMinutes)).toBe('fresh');
    expect(tokenFreshness(token, 86_400_000 - tenMinutes, tenMinutes)).toBe('renew');
    expect(tokenFreshness(token, 86_400_000, tenMinutes)).toBe('expired');
  });
  it('renews a short-lived token at 90 % of its lifetime', () => {
    const short = { accessToken: 't', issuedAt: 0, expiresAt: 1_000 };
    expect(tokenFreshness(short, 899, 600_000)).toBe('fresh');
    expect(tokenFreshness(short, 900, 600_000)).toBe('renew');
  });
  it("reads KIS's expiry text as Korea time", () => {
    expect(parseKisExpiry('2025-06-13 09:15:02')).toBe(Date.parse('2025-06-13T00:15:02Z'));
    expect(parseKisExpiry('tomorrow')).toBeNaN();
  });
});

describe("the reconciler's candidates for an order whose answer was lost", () => {
  it('matches by symbol, side, quantity and time, leaving out linked orders and cancel rows, nearest first', () => {
    const sentAt = new Date('2025-06-12T00:15:00Z');
    const rows = [
      row({ odno: '0000000001', ord_tmd: '091510' }),
      row({ odno: '0000000002', ord_tmd: '091501' }),
      row({ odno: '0000000003', ord_tmd: '091501', sll_buy_dvsn_cd: '01' }),
      row({ odno: '0000000004', ord_tmd: '091501', ord_qty: '11' }),
      row({ odno: '0000000005', ord_tmd: '091501', cncl_yn: 'Y', orgn_odno: '0000000002' }),
      row({ odno: '0000000006', ord_tmd: '091000' }),
      row({ odno: '0000000008', ord_tmd: '091500' }),
    ];
    const candidates = unlinkedCandidates({ request: { symbol: '005930', side: 'buy', qty: '10' }, sentAt }, rows, new Set(['20250612-0000000008']));
    expect(candidates.map((candidate) => candidate.odno)).toEqual(['0000000002', '0000000001']);
    // With a window: nothing placed more than that long after the intent was sent.
    const windowed = unlinkedCandidates({ request: { symbol: '005930', side: 'buy', qty: '10' }, sentAt }, rows, new Set(['20250612-0000000008']), 60_000, 5_000);
    expect(windowed.map((candidate) => candidate.odno)).toEqual(['0000000002']);
  });
});
