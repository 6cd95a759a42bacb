// KIS (Korea Investment & Securities) Open API, domestic stock, as it is spoken on the wire: the
// request bodies and query fields, the answers, tr_ids per call and per domain (paper or live).
// Every number is a string on the wire, quantities and prices alike. POST bodies use upper-case
// keys; answers use lower-case ones, except the order answer's output (upper-case).

/** The documented origins. */
export const KIS_LIVE_URL = 'https://openapi.koreainvestment.com:9443';
export const KIS_PAPER_URL = 'https://openapivts.koreainvestment.com:29443';

export const KIS_PATHS = {
  token: '/oauth2/tokenP',
  /** The WebSocket approval key (see quote-wire.ts). */
  approval: '/oauth2/Approval',
  orderCash: '/uapi/domestic-stock/v1/trading/order-cash',
  orderReviseCancel: '/uapi/domestic-stock/v1/trading/order-rvsecncl',
  dailyOrders: '/uapi/domestic-stock/v1/trading/inquire-daily-ccld',
  balance: '/uapi/domestic-stock/v1/trading/inquire-balance',
  price: '/uapi/domestic-stock/v1/quotations/inquire-price',
  dailyChart: '/uapi/domestic-stock/v1/quotations/inquire-daily-itemchartprice',
} as const;

/**
 * tr_id of each call, live and paper. Trading calls differ by domain (T… live, V… paper);
 * quotations share one. The cash order tr_ids are the current ones (TTTC0012U buy, TTTC0011U
 * sell); the older TTTC0802U / TTTC0801U are still documented as aliases and the fake takes both.
 */
export const KIS_TR_IDS = {
  buy: { live: 'TTTC0012U', paper: 'VTTC0012U' },
  sell: { live: 'TTTC0011U', paper: 'VTTC0011U' },
  reviseCancel: { live: 'TTTC0013U', paper: 'VTTC0013U' },
  /** The daily order/fill inquiry for the last three months. */
  dailyOrders: { live: 'TTTC0081R', paper: 'VTTC0081R' },
  balance: { live: 'TTTC8434R', paper: 'VTTC8434R' },
  price: { live: 'FHKST01010100', paper: 'FHKST01010100' },
  dailyChart: { live: 'FHKST03010100', paper: 'FHKST03010100' },
} as const;
export type TKisCall = keyof typeof KIS_TR_IDS;

/** The older cash order tr_ids, still accepted by KIS (and by the fake). */
export const KIS_LEGACY_ORDER_TR_IDS = { buy: ['TTTC0802U', 'VTTC0802U'], sell: ['TTTC0801U', 'VTTC0801U'] } as const;

/**
 * ORD_DVSN (order division) codes this adapter sends or reads: 00 limit, 01 market, 11/12 limit
 * IOC/FOK, 13/14 market IOC/FOK. KIS has more (conditional limit, best price, after-hours, stop
 * limit); an order placed elsewhere with one of those reads as a limit order.
 */
export const KIS_ORDER_DIVISIONS = {
  limit: '00',
  market: '01',
  limitIoc: '11',
  limitFok: '12',
  marketIoc: '13',
  marketFok: '14',
} as const;

/** Every answer carries these: rt_cd '0' is success, anything else a failure with KIS's message. */
export interface KisEnvelope {
  rt_cd: string;
  msg_cd: string;
  msg1: string;
}

/** `POST /oauth2/tokenP` body. */
export interface KisTokenRequest {
  grant_type: 'client_credentials';
  appkey: string;
  appsecret: string;
}

/** Its answer. The expiry text is Korea time (KST, UTC+9), `YYYY-MM-DD HH:MM:SS`. */
export interface KisTokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
  access_token_token_expired: string;
}

/** The token endpoint's refusal shape (not the envelope: it has its own). */
export interface KisTokenError {
  error_code: string;
  error_description: string;
}

/** `POST order-cash` body. */
export interface KisOrderCashRequest {
  CANO: string;
  ACNT_PRDT_CD: string;
  PDNO: string;
  ORD_DVSN: string;
  ORD_QTY: string;
  /** '0' for a market order. */
  ORD_UNPR: string;
  EXCG_ID_DVSN_CD?: string;
}

export interface KisOrderOutput {
  /** The exchange-forwarding order organisation number: needed to revise or cancel. */
  KRX_FWDG_ORD_ORGNO: string;
  /** The order number; repeats from day to day. */
  ODNO: string;
  /** HHMMSS, Korea time. */
  ORD_TMD: string;
}

export interface KisOrderAnswer extends KisEnvelope {
  output: KisOrderOutput;
}

/** `POST order-rvsecncl` body. RVSE_CNCL_DVSN_CD 01 revise, 02 cancel. */
export interface KisReviseCancelRequest {
  CANO: string;
  ACNT_PRDT_CD: string;
  KRX_FWDG_ORD_ORGNO: string;
  ORGN_ODNO: string;
  ORD_DVSN: string;
  RVSE_CNCL_DVSN_CD: '01' | '02';
  ORD_QTY: string;
  ORD_UNPR: string;
  /** Y: the whole remainder (ORD_QTY then '0'); N: ORD_QTY of it. */
  QTY_ALL_ORD_YN: 'Y' | 'N';
  EXCG_ID_DVSN_CD?: string;
}

/** One row of the daily order/fill inquiry: one order of that day with its fills summed. */
export interface KisDailyOrderRow {
  /** YYYYMMDD. */
  ord_dt: string;
  /** The order numbering branch: the KRX_FWDG_ORD_ORGNO a cancel needs. */
  ord_gno_brno: string;
  odno: string;
  /** The order a revise or cancel row acts on; empty (or zeros) on an ordinary order. */
  orgn_odno: string;
  ord_dvsn_name: string;
  /** 01 sell, 02 buy. */
  sll_buy_dvsn_cd: string;
  sll_buy_dvsn_cd_name: string;
  pdno: string;
  prdt_name: string;
  ord_qty: string;
  ord_unpr: string;
  /** HHMMSS. */
  ord_tmd: string;
  /** Cumulative filled quantity. */
  tot_ccld_qty: string;
  /** Average fill price. */
  avg_prvs: string;
  /** Y on a cancel row. */
  cncl_yn: string;
  /** Cumulative filled amount. */
  tot_ccld_amt: string;
  ord_dvsn_cd: string;
  /** Quantity confirmed canceled. */
  cnc_cfrm_qty: string;
  /** Quantity still working. */
  rmn_qty: string;
  /** Quantity refused. */
  rjct_qty: string;
  /** 없음 (none), IOC, FOK. */
  ccld_cndt_name: string;
  excg_id_dvsn_cd?: string;
}

export interface KisDailyOrderTotals {
  tot_ord_qty: string;
  tot_ccld_qty: string;
  tot_ccld_amt: string;
  prsm_tlex_smtl: string;
  pchs_avg_pric: string;
}

/** Paged: `ctx_area_*` and the `tr_cont` answer header (M or F: more pages; D or E: the last). */
export interface KisDailyOrdersAnswer extends KisEnvelope {
  ctx_area_fk100: string;
  ctx_area_nk100: string;
  output1: KisDailyOrderRow[];
  output2: KisDailyOrderTotals;
}

/** A holding in the balance answer (output1). */
export interface KisHolding {
  pdno: string;
  prdt_name: string;
  hldg_qty: string;
  ord_psbl_qty: string;
  pchs_avg_pric: string;
  pchs_amt: string;
  prpr: string;
  evlu_amt: string;
  evlu_pfls_amt: string;
}

/** The balance totals (output2, an array of one). */
export interface KisBalanceTotals {
  /** Deposit. */
  dnca_tot_amt: string;
  /** Next day's settled cash. */
  nxdy_excc_amt: string;
  /** D+2 settled cash: the deposit after today's trades settle. */
  prvs_rcdl_excc_amt: string;
  scts_evlu_amt: string;
  /** Total evaluation: D+2 cash plus the holdings at the current price. */
  tot_evlu_amt: string;
  nass_amt: string;
  pchs_amt_smtl_amt: string;
  evlu_amt_smtl_amt: string;
  evlu_pfls_smtl_amt: string;
}

export interface KisBalanceAnswer extends KisEnvelope {
  ctx_area_fk100: string;
  ctx_area_nk100: string;
  output1: KisHolding[];
  output2: KisBalanceTotals[];
}

/** The current price inquiry: of its many fields, the ones used. */
export interface KisPriceAnswer extends KisEnvelope {
  output: { stck_prpr: string; stck_shrn_iscd?: string; aspr_unit?: string; [field: string]: string | undefined };
}

export interface KisDailyChartRow {
  /** YYYYMMDD. */
  stck_bsop_date: string;
  stck_oprc: string;
  stck_hgpr: string;
  stck_lwpr: string;
  stck_clpr: string;
  acml_vol: string;
  acml_tr_pbmn: string;
}

/** Newest first, at most 100 rows per call. */
export interface KisDailyChartAnswer extends KisEnvelope {
  output1: Record<string, string>;
  output2: KisDailyChartRow[];
}

/**
 * msg_cd values the client acts on. EGW00201: more requests per second than the key may send
 * (answered with HTTP 500). EGW00121 / EGW00123: a token that is invalid / expired. EGW00133: a
 * token asked for again within a minute (the token endpoint allows one issuance per minute).
 */
export const KIS_MSG = {
  rateLimited: 'EGW00201',
  tokenInvalid: 'EGW00121',
  tokenExpired: 'EGW00123',
  tokenTooSoon: 'EGW00133',
} as const;
