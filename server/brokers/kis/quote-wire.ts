// KIS's real-time price stream (H0STCNT0, 국내주식 실시간체결가 KRX) as it is spoken on the wire,
// and the pure reading of its frames. A client asks POST /oauth2/Approval for an approval key,
// opens a WebSocket (ws://ops.koreainvestment.com:21000 live, :31000 paper) and sends one JSON
// request per symbol; the server answers each with a JSON acknowledgement, sends a JSON PINGPONG
// now and then that the client echoes, and sends trades as text frames
// `0|H0STCNT0|003|<fields>^<fields>^…`: the encryption flag (0 clear, 1 AES, used for fill
// notices only), the tr_id, the count of records (zero-padded), then every record's fields
// joined by ^, each record with the same number of fields. Facts from KIS's official samples
// (koreainvestment/open-trading-api: `examples_llm/kis_auth.py`, `domestic_stock/ccnl_krx`,
// `legacy/websocket/python/ops_ws_sample.py`) and its published OPSP message codes.
import type { BrokerQuote } from '../types.ts';
import { normalDecimal, seoulInstant } from './mapping.ts';
import { KIS_LIVE_URL, KIS_PAPER_URL } from './wire.ts';

/** The documented WebSocket origins, live and paper (plain ws: KIS serves no wss here). */
export const KIS_QUOTES_LIVE_URL = 'ws://ops.koreainvestment.com:21000';
export const KIS_QUOTES_PAPER_URL = 'ws://ops.koreainvestment.com:31000';
/** The path the official samples connect to (`/tryitout` + the tr_id). */
export const KIS_QUOTES_PATH = '/tryitout/H0STCNT0';
/** Real-time trades of a KRX stock, the same tr_id live and paper. */
export const KIS_TRADE_TR_ID = 'H0STCNT0';
export const KIS_PINGPONG_TR_ID = 'PINGPONG';
/**
 * Real-time registrations one session may hold (KIS's notice: 41 a session, over every real-time
 * tr_id; its samples stop at 40). More are refused before connecting.
 */
export const KIS_MAX_SUBSCRIPTIONS = 41;

/**
 * The OPSP msg_cd values of the acknowledgements the stream acts on (KIS's real-time server
 * codes): success, already subscribed, unsubscribed, the session's registrations full, an
 * approval key the server does not know (ask for a fresh one), the app key in use by another
 * session, and the server's passing troubles (internal error, send failure, no resource).
 */
export const KIS_QUOTE_MSG = {
  subscribed: 'OPSP0000',
  unsubscribed: 'OPSP0001',
  alreadySubscribed: 'OPSP0002',
  subscriptionsFull: 'OPSP0008',
  approvalUnknown: 'OPSP0011',
  appKeyInUse: 'OPSP8996',
  passing: ['OPSP0007', 'OPSP0009', 'OPSP8999', 'OPSP9995'],
} as const;

/** `POST /oauth2/Approval`: the app secret goes as `secretkey` here (KIS's own naming). */
export interface KisApprovalRequest {
  grant_type: 'client_credentials';
  appkey: string;
  secretkey: string;
}

export interface KisApprovalAnswer {
  approval_key: string;
}

/** A registration (tr_type 1) or its removal (tr_type 2) of one symbol. */
export interface KisRealtimeRequest {
  header: { approval_key: string; custtype: 'P'; tr_type: '1' | '2'; 'content-type': 'utf-8' };
  body: { input: { tr_id: string; tr_key: string } };
}

/** The JSON acknowledgement of a request (`output.iv`/`key` are the AES key of encrypted tr_ids). */
export interface KisRealtimeAnswer {
  header: { tr_id: string; tr_key?: string; encrypt?: string; datetime?: string };
  body?: { rt_cd: string; msg_cd: string; msg1: string; output?: { iv?: string; key?: string } };
}

/**
 * The fields of one H0STCNT0 record, in order (46 today). Read here: the symbol, the trade time
 * (HHMMSS, Korea time), the price, and the business date (YYYYMMDD) the time belongs to.
 */
export const KIS_TRADE_FIELDS = [
  'MKSC_SHRN_ISCD', 'STCK_CNTG_HOUR', 'STCK_PRPR', 'PRDY_VRSS_SIGN', 'PRDY_VRSS', 'PRDY_CTRT', 'WGHN_AVRG_STCK_PRC', 'STCK_OPRC',
  'STCK_HGPR', 'STCK_LWPR', 'ASKP1', 'BIDP1', 'CNTG_VOL', 'ACML_VOL', 'ACML_TR_PBMN', 'SELN_CNTG_CSNU', 'SHNU_CNTG_CSNU',
  'NTBY_CNTG_CSNU', 'CTTR', 'SELN_CNTG_SMTN', 'SHNU_CNTG_SMTN', 'CCLD_DVSN', 'SHNU_RATE', 'PRDY_VOL_VRSS_ACML_VOL_RATE',
  'OPRC_HOUR', 'OPRC_VRSS_PRPR_SIGN', 'OPRC_VRSS_PRPR', 'HGPR_HOUR', 'HGPR_VRSS_PRPR_SIGN', 'HGPR_VRSS_PRPR', 'LWPR_HOUR',
  'LWPR_VRSS_PRPR_SIGN', 'LWPR_VRSS_PRPR', 'BSOP_DATE', 'NEW_MKOP_CLS_CODE', 'TRHT_YN', 'ASKP_RSQN1', 'BIDP_RSQN1',
  'TOTAL_ASKP_RSQN', 'TOTAL_BIDP_RSQN', 'VOL_TNRT', 'PRDY_SMNS_HOUR_ACML_VOL', 'PRDY_SMNS_HOUR_ACML_VOL_RATE',
  'HOUR_CLS_CODE', 'MRKT_TRTM_CLS_CODE', 'VI_STND_PRC',
] as const;
const FIELD = { symbol: 0, time: 1, price: 2, businessDate: KIS_TRADE_FIELDS.indexOf('BSOP_DATE') } as const;

/** The WebSocket URL of a REST origin: the documented one for KIS's origins, else the origin's own host (a fake). */
export const kisQuoteStreamUrl = (origin: string): string => {
  if (origin === new URL(KIS_LIVE_URL).origin) return `${KIS_QUOTES_LIVE_URL}${KIS_QUOTES_PATH}`;
  if (origin === new URL(KIS_PAPER_URL).origin) return `${KIS_QUOTES_PAPER_URL}${KIS_QUOTES_PATH}`;
  const url = new URL(KIS_QUOTES_PATH, origin);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
};

export const kisRealtimeRequest = (approvalKey: string, symbol: string, subscribe: boolean): KisRealtimeRequest => ({
  header: { approval_key: approvalKey, custtype: 'P', tr_type: subscribe ? '1' : '2', 'content-type': 'utf-8' },
  body: { input: { tr_id: KIS_TRADE_TR_ID, tr_key: symbol } },
});

export type TKisRealtimeFrame =
  /** Records of a tr_id, each a list of fields (encrypted ones are one opaque field). */
  | { kind: 'data'; encrypted: boolean; trId: string; records: string[][] }
  | { kind: 'pingpong' }
  /** The answer to a request: `ok` is rt_cd 0. */
  | { kind: 'answer'; trId: string; trKey: string; ok: boolean; msgCd: string; msg1: string }
  | { kind: 'malformed'; why: string };

const dataFrame = (text: string): TKisRealtimeFrame => {
  const [flag, trId = '', countText = '', ...rest] = text.split('|');
  // The records never contain a pipe; a frame with more parts is not KIS's.
  if (rest.length !== 1) return { kind: 'malformed', why: 'a data frame without its four parts' };
  const payload = rest[0]!;
  const count = /^\d{1,4}$/.test(countText) ? Number(countText) : Number.NaN;
  if (!Number.isInteger(count) || count < 1) return { kind: 'malformed', why: `a data frame of ${trId} with a count of "${countText}"` };
  if (flag === '1') return { kind: 'data', encrypted: true, trId, records: [[payload]] };
  const fields = payload.split('^');
  if (fields.length % count !== 0) return { kind: 'malformed', why: `a data frame of ${trId} whose ${fields.length} fields are not ${count} records` };
  const width = fields.length / count;
  const records = Array.from({ length: count }, (_, index) => fields.slice(index * width, (index + 1) * width));
  return { kind: 'data', encrypted: false, trId, records };
};

/** One text frame of the stream, read. Pure: what to do with it is the stream's. */
export const parseKisRealtimeFrame = (text: string): TKisRealtimeFrame => {
  if (text.startsWith('0|') || text.startsWith('1|')) return dataFrame(text);
  let message: Partial<KisRealtimeAnswer>;
  try {
    message = JSON.parse(text) as Partial<KisRealtimeAnswer>;
  } catch {
    return { kind: 'malformed', why: 'neither a data frame nor JSON' };
  }
  const trId = message?.header?.tr_id;
  if (typeof trId !== 'string') return { kind: 'malformed', why: 'JSON without header.tr_id' };
  if (trId === KIS_PINGPONG_TR_ID) return { kind: 'pingpong' };
  const body = message.body;
  if (!body || typeof body.rt_cd !== 'string') return { kind: 'malformed', why: `an answer of ${trId} without rt_cd` };
  return { kind: 'answer', trId, trKey: message.header?.tr_key ?? '', ok: body.rt_cd === '0', msgCd: String(body.msg_cd ?? ''), msg1: String(body.msg1 ?? '').trim() };
};

/**
 * The quotes of H0STCNT0 records, and why any record was left out. The time is the record's
 * HHMMSS in Korea time on its business date (BSOP_DATE), or on `fallbackDate` (the Korea date
 * now) where a record has none. The price is kept as KIS sent it, in its shortest decimal form.
 */
export const quotesOfTradeRecords = (records: readonly (readonly string[])[], fallbackDate: string): { quotes: BrokerQuote[]; dropped: string[] } => {
  const quotes: BrokerQuote[] = [];
  const dropped: string[] = [];
  for (const record of records) {
    const symbol = record[FIELD.symbol] ?? '';
    const time = record[FIELD.time] ?? '';
    const price = record[FIELD.price] ?? '';
    const recordDate = record[FIELD.businessDate] ?? '';
    const date = /^\d{8}$/.test(recordDate) ? recordDate : fallbackDate;
    if (!symbol) dropped.push('a record without a symbol');
    else if (!/^\d{6}$/.test(time) || Number(time.slice(0, 2)) > 23 || Number(time.slice(2, 4)) > 59 || Number(time.slice(4, 6)) > 59) dropped.push(`${symbol}: a trade time of "${time}"`);
    else if (!/^\d+(\.\d+)?$/.test(price) || Number(price) === 0) dropped.push(`${symbol}: a price of "${price}"`);
    else quotes.push({ symbol, price: normalDecimal(price), at: seoulInstant(date, time) });
  }
  return { quotes, dropped };
};
