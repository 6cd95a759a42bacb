// KIS's real-time price stream on the wire, read by pure functions: data frames of one and of
// several records, encrypted ones, PINGPONGs, acknowledgements, frames that are not KIS's, the
// quotes of trade records (Korea time on the record's business date, the price's shortest
// decimal), the registration request, and the WebSocket URL of a REST origin.
import { describe, expect, it } from 'vitest';
import { kisQuoteStreamUrl, kisRealtimeRequest, KIS_TRADE_FIELDS, parseKisRealtimeFrame, quotesOfTradeRecords } from '../../server/brokers/kis/quote-wire.ts';

/** A record as KIS sends it (46 fields, some empty), with the symbol, time, price and business date given. */
const record = (symbol: string, time: string, price: string, businessDate = '20250612') =>
  [symbol, time, price, '5', '-100', '-0.14', '72023.83', '72100', '72400', '71700', '71900', '71800', '1', '3052507', '219853241700', '5105', '6937', '1832', '84.90', '1366314', '1159996', '5', '0.42', '20.28', '090020', '5', '-200', '090820', '5', '-500', '092619', '2', '200', businessDate, '20', 'N', '65945', '216924', '1118750', '2199206', '0.05', '2424142', '125.92', '0', '', '72100'];

describe('parseKisRealtimeFrame', () => {
  it('reads a data frame of one record into its fields', () => {
    const fields = record('005930', '093354', '71900');
    expect(fields).toHaveLength(KIS_TRADE_FIELDS.length);
    expect(parseKisRealtimeFrame(`0|H0STCNT0|001|${fields.join('^')}`)).toEqual({ kind: 'data', encrypted: false, trId: 'H0STCNT0', records: [fields] });
  });

  it('splits a frame of several records by its count, each as wide as the others', () => {
    const records = [record('005930', '093354', '71900'), record('000660', '093354', '180500'), record('005930', '093355', '72000')];
    const frame = parseKisRealtimeFrame(`0|H0STCNT0|003|${records.map((fields) => fields.join('^')).join('^')}`);
    expect(frame).toEqual({ kind: 'data', encrypted: false, trId: 'H0STCNT0', records });
  });

  it('keeps an encrypted frame opaque', () => {
    expect(parseKisRealtimeFrame('1|H0STCNI9|001|U2FsdGVkX1+abc==')).toEqual({ kind: 'data', encrypted: true, trId: 'H0STCNI9', records: [['U2FsdGVkX1+abc==']] });
  });

  it.each([
    ['fields that are not the count of records', `0|H0STCNT0|002|${record('005930', '093354', '71900').join('^')}^extra`],
    ['a count of zero', `0|H0STCNT0|000|${record('005930', '093354', '71900').join('^')}`],
    ['a count that is not a number', `0|H0STCNT0|x|${record('005930', '093354', '71900').join('^')}`],
    ['a part missing', '0|H0STCNT0|001'],
    ['a pipe too many', `0|H0STCNT0|001|a^b|c`],
    ['text that is neither', 'hello'],
    ['JSON without a header', '{"body":{"rt_cd":"0"}}'],
    ['an answer without rt_cd', '{"header":{"tr_id":"H0STCNT0","tr_key":"005930"}}'],
  ])('calls %s malformed', (_what, text) => {
    expect(parseKisRealtimeFrame(text).kind).toBe('malformed');
  });

  it('tells a PINGPONG', () => {
    expect(parseKisRealtimeFrame('{"header":{"tr_id":"PINGPONG","datetime":"20250612093015"}}')).toEqual({ kind: 'pingpong' });
  });

  it('reads an acknowledgement, successful or not', () => {
    const ok = '{"header":{"tr_id":"H0STCNT0","tr_key":"005930","encrypt":"N"},"body":{"rt_cd":"0","msg_cd":"OPSP0000","msg1":"SUBSCRIBE SUCCESS","output":{"iv":"0123456789abcdef","key":"abcdefghijklmnopabcdefghijklmnop"}}}';
    expect(parseKisRealtimeFrame(ok)).toEqual({ kind: 'answer', trId: 'H0STCNT0', trKey: '005930', ok: true, msgCd: 'OPSP0000', msg1: 'SUBSCRIBE SUCCESS' });
    const refused = '{"header":{"tr_id":"(null)","tr_key":"(null)","encrypt":"N"},"body":{"rt_cd":"9","msg_cd":"OPSP0011","msg1":"invalid approval : NOT FOUND "}}';
    expect(parseKisRealtimeFrame(refused)).toEqual({ kind: 'answer', trId: '(null)', trKey: '(null)', ok: false, msgCd: 'OPSP0011', msg1: 'invalid approval : NOT FOUND' });
  });
});

describe('quotesOfTradeRecords', () => {
  it('reads the symbol, the price and the instant of the Korea time on the business date', () => {
    expect(quotesOfTradeRecords([record('005930', '093354', '71900'), record('000660', '152959', '180500', '20250613')], '20990101')).toEqual({
      quotes: [
        { symbol: '005930', price: '71900', at: new Date('2025-06-12T00:33:54Z') },
        { symbol: '000660', price: '180500', at: new Date('2025-06-13T06:29:59Z') },
      ],
      dropped: [],
    });
  });

  it('takes the fallback date for a record without a business date, and the shortest decimal of a padded price', () => {
    const { quotes } = quotesOfTradeRecords([record('005930', '000001', '0071900', ''), record('069500', '100000', '35120.50')], '20250614');
    expect(quotes).toEqual([
      // 00:00:01 in Seoul is the day before in UTC.
      { symbol: '005930', price: '71900', at: new Date('2025-06-13T15:00:01Z') },
      { symbol: '069500', price: '35120.5', at: new Date('2025-06-12T01:00:00Z') },
    ]);
  });

  it('drops a record without a symbol, a usable time or a price, and says why', () => {
    const { quotes, dropped } = quotesOfTradeRecords([record('', '093354', '71900'), record('005930', '9335', '71900'), record('005930', '250000', '71900'), record('005930', '093354', '0'), record('005930', '093354', '-5'), record('005930', '093354', '71,900')], '20250612');
    expect(quotes).toEqual([]);
    expect(dropped).toEqual(['a record without a symbol', '005930: a trade time of "9335"', '005930: a trade time of "250000"', '005930: a price of "0"', '005930: a price of "-5"', '005930: a price of "71,900"']);
  });
});

describe('the registration and the URL', () => {
  it('registers and removes a symbol as KIS samples do', () => {
    expect(kisRealtimeRequest('approval-1', '005930', true)).toEqual({ header: { approval_key: 'approval-1', custtype: 'P', tr_type: '1', 'content-type': 'utf-8' }, body: { input: { tr_id: 'H0STCNT0', tr_key: '005930' } } });
    expect(kisRealtimeRequest('approval-1', '005930', false).header.tr_type).toBe('2');
  });

  it.each([
    ['https://openapi.koreainvestment.com:9443', 'ws://ops.koreainvestment.com:21000/tryitout/H0STCNT0'],
    ['https://openapivts.koreainvestment.com:29443', 'ws://ops.koreainvestment.com:31000/tryitout/H0STCNT0'],
    ['http://127.0.0.1:40123', 'ws://127.0.0.1:40123/tryitout/H0STCNT0'],
    ['https://kis.example.test:8443', 'wss://kis.example.test:8443/tryitout/H0STCNT0'],
  ])('streams the origin %s from %s', (origin, url) => {
    expect(kisQuoteStreamUrl(origin)).toBe(url);
  });
});
