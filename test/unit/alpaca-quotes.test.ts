// The Alpaca data stream's frames as the quote stream reads them: every control message, trades as
// quotes with their price's decimal text and their time, and what is skipped or refused.
import { describe, expect, it } from 'vitest';
import { parseDataFrame } from '../../server/brokers/alpaca/quotes.ts';

describe('parseDataFrame', () => {
  it('reads each message of a frame in order: control messages, trades, and other channels skipped', () => {
    const frame =
      '[{"T":"success","msg":"connected"},{"T":"success","msg":"authenticated"},' +
      '{"T":"subscription","trades":["AAPL","MSFT"],"quotes":[],"bars":[],"updatedBars":[],"dailyBars":[],"statuses":[],"lulds":[],"corrections":["AAPL","MSFT"],"cancelErrors":["AAPL","MSFT"]},' +
      '{"T":"t","S":"AAPL","i":52983525029461,"x":"V","p":189.12,"s":100,"c":["@"],"z":"C","t":"2026-01-02T15:04:05.123456789Z"},' +
      '{"T":"q","S":"AAPL","bx":"V","bp":189.1,"bs":1,"ax":"V","ap":189.2,"as":2,"c":["R"],"z":"C","t":"2026-01-02T15:04:05.2Z"},' +
      '{"T":"error","code":406,"msg":"connection limit exceeded"}]';
    expect(parseDataFrame(frame)).toEqual([
      { kind: 'connected' },
      { kind: 'authenticated' },
      { kind: 'subscribed', trades: ['AAPL', 'MSFT'] },
      { kind: 'trade', quote: { symbol: 'AAPL', price: '189.12', at: new Date('2026-01-02T15:04:05.123Z') } },
      { kind: 'ignored', type: 'q' },
      { kind: 'error', code: 406, message: 'connection limit exceeded' },
    ]);
  });

  // [the price as sent (JSON), its text]
  const prices: Array<[string, string]> = [
    ['100.10', '100.1'],
    ['0.0001', '0.0001'],
    ['1234567.8901', '1234567.8901'],
    ['189', '189'],
    ['1e2', '100'],
  ];
  it.each(prices)('reads the JSON number %s as the decimal text %s', (sent, text) => {
    const [event] = parseDataFrame(`[{"T":"t","S":"X","i":1,"x":"V","p":${sent},"s":1,"z":"C","t":"2026-01-02T15:04:05Z"}]`);
    expect(event).toEqual({ kind: 'trade', quote: { symbol: 'X', price: text, at: new Date('2026-01-02T15:04:05Z') } });
  });

  // [what, the trade's fields]
  const malformed: Array<[string, string]> = [
    ['a price as a string', '"S":"X","p":"189.12","t":"2026-01-02T15:04:05Z"'],
    ['a zero price', '"S":"X","p":0,"t":"2026-01-02T15:04:05Z"'],
    ['a negative price', '"S":"X","p":-1,"t":"2026-01-02T15:04:05Z"'],
    ['a price that only prints with an exponent', '"S":"X","p":1e-7,"t":"2026-01-02T15:04:05Z"'],
    ['no symbol', '"p":1,"t":"2026-01-02T15:04:05Z"'],
    ['an empty symbol', '"S":"","p":1,"t":"2026-01-02T15:04:05Z"'],
    ['no time', '"S":"X","p":1'],
    ['a time that is none', '"S":"X","p":1,"t":"yesterday"'],
  ];
  it.each(malformed)('skips a trade with %s', (_what, fields) => {
    expect(parseDataFrame(`[{"T":"t",${fields}}]`)).toEqual([{ kind: 'ignored', type: 'malformed trade' }]);
  });

  it('skips what is not a message, and an unknown success', () => {
    expect(parseDataFrame('[1,null,{"msg":"no type"},{"T":"success","msg":"something new"}]')).toEqual([
      { kind: 'ignored', type: 'malformed' },
      { kind: 'ignored', type: 'malformed' },
      { kind: 'ignored', type: 'malformed' },
      { kind: 'ignored', type: 'success' },
    ]);
  });

  it('reads an error without its fields as code 0, and a subscription without trades as none', () => {
    expect(parseDataFrame('[{"T":"error"},{"T":"subscription","trades":[1,"AAPL"]},{"T":"subscription"}]')).toEqual([
      { kind: 'error', code: 0, message: '' },
      { kind: 'subscribed', trades: ['AAPL'] },
      { kind: 'subscribed', trades: [] },
    ]);
  });

  it('refuses a frame that is not a JSON array of messages', () => {
    expect(() => parseDataFrame('{"T":"success","msg":"connected"}')).toThrow('JSON array');
    expect(() => parseDataFrame('not json')).toThrow(SyntaxError);
  });
});
