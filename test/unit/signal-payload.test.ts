// The pure rules of a signal webhook's body (server/signals/payload.ts) and the lot rounding its
// qty_pct shares with the bot (brokers/fills.ts roundDownToLot).
import { describe, expect, it } from 'vitest';
import { roundDownToLot } from '../../server/brokers/fills.ts';
import { judgeSignal, passphraseHashOf, signalTimeOf, webhookClientOrderId } from '../../server/signals/payload.ts';

const HOOK: Parameters<typeof judgeSignal>[0] = { id: '6f1c2b7e-8d3a-4e5f-9a0b-1c2d3e4f5a6b', assetClass: 'crypto', mode: 'paper', maxLagSec: 120, passphraseHash: null };
const AT = new Date('2026-03-10T15:00:00Z');
const judge = (body: unknown, hook = HOOK) => judgeSignal(hook, typeof body === 'string' ? body : JSON.stringify(body), AT);

describe('signalTimeOf', () => {
  it('reads ISO 8601 with an offset and Unix seconds (a number or its digits), nothing else', () => {
    expect(signalTimeOf('2026-03-10T14:59:00Z')).toEqual(new Date('2026-03-10T14:59:00Z'));
    expect(signalTimeOf('2026-03-10T23:59:00+09:00')).toEqual(new Date('2026-03-10T14:59:00Z'));
    expect(signalTimeOf(1_773_154_740)).toEqual(new Date('2026-03-10T14:59:00Z'));
    expect(signalTimeOf('1773154740')).toEqual(new Date('2026-03-10T14:59:00Z'));
    for (const bad of ['2026-03-10T14:59:00', '2026-03-10', 'yesterday', '', '2026-13-45T99:99:00Z']) expect(signalTimeOf(bad), bad).toBeUndefined();
    expect(signalTimeOf(-1)).toBeUndefined();
  });
});

describe('judgeSignal', () => {
  it('takes a signal with qty or qty_pct, market by default', () => {
    const judged = judge({ symbol: 'BTCUSDT', side: 'buy', qty_pct: 0.25 });
    expect(judged).toMatchObject({ ok: true, payload: { order_type: 'market', qty_pct: 0.25 } });
  });

  it('refuses what does not parse or validate as invalid, naming the field', () => {
    expect(judge('{"symbol":')).toMatchObject({ ok: false, refusal: { outcome: 'invalid', code: 'VALIDATION_ERROR', message: 'Malformed JSON body' } });
    expect(judge('[]')).toMatchObject({ ok: false, refusal: { outcome: 'invalid' } });
    // An empty body is an empty object, as on REST: each missing field is named.
    const empty = judge('  ');
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(empty.refusal.errors?.map((error) => error.path)).toEqual(expect.arrayContaining(['symbol', 'side']));
    expect(judge({ symbol: 'BTC/USDT', side: 'buy' })).toMatchObject({ ok: false, refusal: { errors: [{ path: 'qty' }] } });
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: '1' })).toMatchObject({ ok: false, refusal: { errors: [expect.objectContaining({ path: 'qty' })] } });
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1, order_type: 'limit' })).toMatchObject({ ok: false, refusal: { errors: [{ path: 'limit_price' }], seen: { symbol: 'BTC/USDT', side: 'buy' } } });
  });

  it('refuses a stale or far-future timestamp as invalid, and takes one within max_lag_sec', () => {
    const at = (offsetSec: number) => new Date(AT.getTime() + offsetSec * 1000).toISOString();
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1, timestamp: at(-121) })).toMatchObject({ ok: false, refusal: { errors: [{ path: 'timestamp' }] } });
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1, timestamp: at(121) })).toMatchObject({ ok: false, refusal: { errors: [{ path: 'timestamp' }] } });
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1, timestamp: at(-119) })).toMatchObject({ ok: true });
  });

  it('checks the passphrase of a hook that has one', () => {
    const hook = { ...HOOK, passphraseHash: passphraseHashOf(HOOK.id, 'open sesame') };
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1, passphrase: 'open sesame' }, hook)).toMatchObject({ ok: true });
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1, passphrase: 'open barley' }, hook)).toMatchObject({ ok: false, refusal: { outcome: 'refused', code: 'FORBIDDEN' } });
    expect(judge({ symbol: 'BTC/USDT', side: 'buy', qty: 1 }, hook)).toMatchObject({ ok: false, refusal: { outcome: 'refused', code: 'FORBIDDEN' } });
    // The same passphrase on another hook is another hash.
    expect(passphraseHashOf('another-hook', 'open sesame')).not.toBe(hook.passphraseHash);
  });
});

describe('webhookClientOrderId', () => {
  it('is wh- and 48 hex digits, the same for one hook and alert, different across hooks, alerts and signals', () => {
    const id = webhookClientOrderId(HOOK.id, { alertId: 'a1' });
    expect(id).toMatch(/^wh-[0-9a-f]{48}$/);
    expect(webhookClientOrderId(HOOK.id, { alertId: 'a1' })).toBe(id);
    expect(webhookClientOrderId('another-hook', { alertId: 'a1' })).not.toBe(id);
    expect(webhookClientOrderId(HOOK.id, { alertId: 'a2' })).not.toBe(id);
    expect(webhookClientOrderId(HOOK.id, { signalId: 'a1' })).not.toBe(id);
  });
});

describe('roundDownToLot', () => {
  it('rounds down to the pair’s step, whole shares, or 9 decimals of a fractional share', () => {
    expect(roundDownToLot('0.002469', '0.00001', true).toFixed()).toBe('0.00246');
    expect(roundDownToLot('2.99', '1', false).toFixed()).toBe('2');
    expect(roundDownToLot('0.123456789123', '1', true).toFixed()).toBe('0.123456789');
    expect(roundDownToLot('0.000009', '0.00001', true).toFixed()).toBe('0');
    expect(roundDownToLot('-1', '1', false).toFixed()).toBe('0');
  });
});
