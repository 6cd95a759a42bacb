// Which outbox rows a notification channel is told of, and as which event: every event a user can
// subscribe to has its row, and rows of the same channels that are not news (an order's other
// events, a bot that runs, an analysis under way) are not.
import { describe, expect, it } from 'vitest';
import { noticeItemOf } from '../../server/notifications/events.ts';

const at = new Date('2026-03-10T15:00:00.000Z');
const item = (channel: string, frame: Record<string, unknown>) => noticeItemOf({ channel: channel as never, frame, at });

describe('noticeItemOf', () => {
  it('tells a fill, with its side, amount, symbol and price', () => {
    expect(item('live', { type: 'trade', side: 'buy', amount: '0.5', symbol: 'BTC/USDT', price: '50000', asset_class: 'crypto', fee: '25' })).toMatchObject({
      event: 'fill',
      at: at.toISOString(),
      text: 'Fill: buy 0.5 BTC/USDT at 50000 (crypto), fee 25',
    });
  });

  it('tells a rejected order with its reason, and no other order event', () => {
    expect(item('orders', { type: 'order_event', event_type: 'rejected', symbol: 'AAPL', asset_class: 'us_equity', client_order_id: 'c-1', status: 'rejected', payload: { reason: 'insufficient buying power' } })).toMatchObject({
      event: 'rejection',
      text: 'Order rejected: AAPL (us_equity), order c-1: insufficient buying power',
    });
    for (const eventType of ['placed', 'accepted', 'fill', 'canceled']) expect(item('orders', { type: 'order_event', event_type: eventType })).toBeUndefined();
  });

  it('tells an emulated order canceled because its trigger’s child was refused, as a rejection; no other cancel', () => {
    const frame = { type: 'order_event', event_type: 'canceled', symbol: 'BTC/USDT', asset_class: 'crypto', client_order_id: 'c-2', status: 'canceled', payload: { cancel_reason: 'trigger_refused', code: 'INSUFFICIENT_FUNDS', reason: 'not enough USDT' } };
    expect(item('orders', frame)).toMatchObject({ event: 'rejection', text: 'Order canceled: BTC/USDT (crypto), order c-2 triggered but its order was refused: not enough USDT' });
    expect(item('orders', { ...frame, payload: { emulated: true } })).toBeUndefined();
  });

  it('tells a bot halted, not a bot running', () => {
    expect(item('live', { type: 'bot_status', is_halted: true, halt_reason: 'kill switch' })).toMatchObject({ event: 'bot_halted', text: 'Bot halted: kill switch' });
    expect(item('live', { type: 'bot_status', is_halted: false })).toBeUndefined();
  });

  it('tells an analysis once it ended (done, partial or failed), not while it runs', () => {
    for (const status of ['done', 'partial', 'failed']) expect(item('live', { type: 'report_status', status, symbol: 'AAPL', mode: 'quick', report_id: 'r-1' })?.event).toBe('analysis_done');
    for (const status of ['queued', 'running']) expect(item('live', { type: 'report_status', status })).toBeUndefined();
  });

  it('tells the kill switch’s alert and lock and a live promotion from their notices', () => {
    expect(item('notices', { type: 'kill_switch_alert', asset_class: 'crypto', mode: 'paper', pnl_pct: '-4.2' })?.event).toBe('kill_switch_alert');
    expect(item('notices', { type: 'kill_switch_lock', asset_class: 'crypto', pnl_pct: '-5.5', locked_until: '2026-03-11T00:00:00Z' })).toMatchObject({
      event: 'kill_switch_lock',
      text: 'Kill switch: crypto trading locked until 2026-03-11T00:00:00Z (daily loss -5.5 %)',
    });
    expect(item('notices', { type: 'live_enabled', asset_class: 'us_equity' })).toMatchObject({ event: 'live_enabled', text: 'Live trading enabled for us_equity' });
  });

  it('tells nothing of the rows no channel subscribes to', () => {
    expect(item('live', { type: 'account_update' })).toBeUndefined();
    expect(item('notices', { type: 'something_else' })).toBeUndefined();
  });
});
