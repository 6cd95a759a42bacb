// Which outbox events a notification channel may be told, and each one's line of text. Fills,
// rejections (an emulated order canceled because its trigger's child was refused among them), halts and finished analyses are already in the outbox for the WebSocket channels;
// the kill switch's alert and lock and a live promotion write a `notices` row of their own
// (noticeEvent), which no client receives.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TNotificationEvent } from '../../contracts/notifications.ts';
import type { NewEvent } from '../events/bus.ts';
import type { OutboxRow } from '../events/queries.ts';

/** One event as a message lists it. */
export interface NoticeItem {
  event: TNotificationEvent;
  /** ISO instant of the change. */
  at: string;
  text: string;
  /** The frame's facts, for machines (a webhook's JSON); never a secret. */
  data: Record<string, unknown>;
}

/** The frames of a `notices` row. */
export type Notice =
  | { type: 'kill_switch_alert'; asset_class: TAssetClass; mode: string; pnl_pct: string }
  | { type: 'kill_switch_lock'; asset_class: TAssetClass; pnl_pct: string; locked_until: string }
  | { type: 'live_enabled'; asset_class: TAssetClass };

/** A notice as an outbox row, appended in the transaction of the change it reports. */
export const noticeEvent = (userId: number, notice: Notice, at: Date): NewEvent => ({ userId, channel: 'notices', frame: { ...notice, ts: at.toISOString() }, at });

const str = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');

const itemOf = (event: TNotificationEvent, frame: Record<string, unknown>, at: string, text: string): NoticeItem => ({ event, at, text, data: frame });

/** What a row tells a channel, or undefined for a row no channel is told of. */
export const noticeItemOf = (row: Pick<OutboxRow, 'channel' | 'frame'> & { at: Date }): NoticeItem | undefined => {
  const { frame } = row;
  const at = row.at.toISOString();
  switch (`${row.channel}:${str(frame.type)}`) {
    case 'live:trade':
      return itemOf('fill', frame, at, `Fill: ${str(frame.side)} ${str(frame.amount)} ${str(frame.symbol)} at ${str(frame.price)} (${str(frame.asset_class)}), fee ${str(frame.fee)}`);
    case 'orders:order_event': {
      const payload = (frame.payload ?? {}) as Record<string, unknown>;
      // An emulated order whose trigger fired and whose child was refused is canceled: news as a rejection is.
      if (frame.event_type === 'canceled' && payload.cancel_reason === 'trigger_refused') {
        return itemOf('rejection', frame, at, `Order canceled: ${str(frame.symbol)} (${str(frame.asset_class)}), order ${str(frame.client_order_id)} triggered but its order was refused: ${str(payload.reason)}`);
      }
      if (frame.event_type !== 'rejected') return undefined;
      const reason = str(payload.reason) || str(frame.status);
      return itemOf('rejection', frame, at, `Order rejected: ${str(frame.symbol)} (${str(frame.asset_class)}), order ${str(frame.client_order_id)}${reason ? `: ${reason}` : ''}`);
    }
    case 'live:bot_status':
      return frame.is_halted === true ? itemOf('bot_halted', frame, at, `Bot halted${frame.halt_reason ? `: ${str(frame.halt_reason)}` : ''}`) : undefined;
    case 'live:report_status': {
      const status = str(frame.status);
      if (status !== 'done' && status !== 'partial' && status !== 'failed') return undefined;
      return itemOf('analysis_done', frame, at, `Analysis of ${str(frame.symbol)} (${str(frame.mode)}) finished: ${status}, report ${str(frame.report_id)}`);
    }
    case 'notices:kill_switch_alert':
      return itemOf('kill_switch_alert', frame, at, `Kill switch alert: daily loss ${str(frame.pnl_pct)} % on ${str(frame.asset_class)} (${str(frame.mode)}); trading locks at −5 %`);
    case 'notices:kill_switch_lock':
      return itemOf('kill_switch_lock', frame, at, `Kill switch: ${str(frame.asset_class)} trading locked until ${str(frame.locked_until)} (daily loss ${str(frame.pnl_pct)} %)`);
    case 'notices:live_enabled':
      return itemOf('live_enabled', frame, at, `Live trading enabled for ${str(frame.asset_class)}`);
    default:
      return undefined;
  }
};
