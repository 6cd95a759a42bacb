// What a hook's body says, judged without the database: its JSON parsed and validated (the order
// fields by the order's own schema), its passphrase and its age checked. Also the signal's client
// order id and the rounding of a fraction to the instrument's lot. Pure functions.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ZPlaceOrderRequest, type TPlaceOrderRequest } from '../../contracts/orders.ts';
import { ZSignalPayload, type TSignalPayload } from '../../contracts/signals.ts';
import type { TAppErrorCode, TFieldError } from '../../contracts/errors.ts';
import { jsonDepth, MAX_JSON_DEPTH } from '../http/io.ts';
import { excerpt, fieldErrorsOf } from '../trpc/errors.ts';
import type { SignalWebhookRow } from '../db/schema/index.ts';

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A passphrase's hash, salted with its hook's id so that two hooks with one passphrase differ. */
export const passphraseHashOf = (hookId: string, passphrase: string): string => sha256Hex(`${hookId}\n${passphrase}`);

/** The client order id a client order id takes within ZClientOrderId's 64 characters: `wh-` and 48 hex digits. */
const DIGEST_HEX = 48;

/**
 * The client order id of a hook's signal: `wh-` + a digest of the hook and `key`, the alert's own
 * id (a retried alert is one order, the order service's idempotency by client order id), or the
 * signal's id when the alert has none (every call a new order, and a retry of the same signal after
 * a restart still the same). Two hooks never share one: the hook's id is in the digest.
 */
export const webhookClientOrderId = (hookId: string, key: { alertId: string } | { signalId: string }): string =>
  `wh-${sha256Hex(`${hookId}\n${'alertId' in key ? `alert:${key.alertId}` : `signal:${key.signalId}`}`).slice(0, DIGEST_HEX)}`;

/** Unix seconds written as digits (TradingView's `{{timenow}}` is ISO; scripts often send seconds). */
const UNIX_SECONDS = /^\d{1,12}(\.\d+)?$/;
/** ISO 8601 with a date, a time and an offset (`Z` or ±hh:mm). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** The instant a signal's `timestamp` names, or undefined when it names none. */
export const signalTimeOf = (timestamp: string | number): Date | undefined => {
  if (typeof timestamp === 'number') return Number.isFinite(timestamp) && timestamp >= 0 ? new Date(timestamp * 1000) : undefined;
  const text = timestamp.trim();
  if (UNIX_SECONDS.test(text)) return new Date(Number(text) * 1000);
  if (!ISO_INSTANT.test(text)) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
};

/** Why a call makes no order, as its signal lists it and its answer says. */
export interface SignalRefusal {
  outcome: 'invalid' | 'refused';
  code: TAppErrorCode;
  message: string;
  errors?: TFieldError[];
  /** What could be read of the body, for the list (never its passphrase). */
  seen: { symbol?: string; side?: 'buy' | 'sell'; alertId?: string; qtyPct?: number; qty?: number; orderType?: string };
}

export type Judged = { ok: true; payload: TSignalPayload; order: TPlaceOrderRequest } | { ok: false; refusal: SignalRefusal };

const invalid = (message: string, errors: TFieldError[], seen: SignalRefusal['seen'] = {}): Judged => ({
  ok: false,
  refusal: { outcome: 'invalid', code: 'VALIDATION_ERROR', message, errors, seen },
});

/** What the list may show of a body that failed validation: plain fields of the expected types. */
const seenOf = (body: Record<string, unknown>): SignalRefusal['seen'] => {
  const text = (value: unknown) => (typeof value === 'string' && value.isWellFormed() && !value.includes('\u0000') ? excerpt(value.trim(), 64) : undefined);
  const side = body.side === 'buy' || body.side === 'sell' ? body.side : undefined;
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  return { symbol: text(body.symbol), side, alertId: text(body.alert_id), qty: number(body.qty), qtyPct: number(body.qty_pct), orderType: text(body.order_type) };
};

const sameSecret = (given: string, expectedHash: string, hookId: string) => {
  const a = Buffer.from(passphraseHashOf(hookId, given), 'hex');
  const b = Buffer.from(expectedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * Judges a call's body for its hook at `at`: JSON (whatever media type declared it), the signal's
 * fields, the order it asks for as POST /api/equity/orders would judge it, the passphrase when the
 * hook has one, and the alert's age against the hook's max_lag_sec.
 */
export const judgeSignal = (hook: Pick<SignalWebhookRow, 'id' | 'assetClass' | 'mode' | 'maxLagSec' | 'passphraseHash'>, text: string, at: Date): Judged => {
  // An empty body reads as an empty object, as on every REST route: the answer names each missing field.
  const trimmed = text.trim() || '{}';
  if (jsonDepth(trimmed) > MAX_JSON_DEPTH) return invalid('Malformed JSON body', [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }]);
  let body: unknown;
  try {
    body = JSON.parse(trimmed);
  } catch (error) {
    return invalid('Malformed JSON body', [{ path: '', message: excerpt((error as Error).message, 120) }]);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('The body must be a JSON object', [{ path: '', message: 'expected an object' }]);
  const fields = body as Record<string, unknown>;
  const parsed = ZSignalPayload.safeParse(fields);
  if (!parsed.success) return invalid('Signal validation failed', fieldErrorsOf(parsed.error), seenOf(fields));
  const payload = parsed.data;
  const seen: SignalRefusal['seen'] = { symbol: payload.symbol, side: payload.side, alertId: payload.alert_id, qty: payload.qty, qtyPct: payload.qty_pct, orderType: payload.order_type };
  // The order's own rules (prices per type, ...), with one lot standing in for a fraction's quantity.
  const order = ZPlaceOrderRequest.safeParse(orderRequestOf(hook, payload, payload.qty ?? 1));
  if (!order.success) return invalid('Signal validation failed', fieldErrorsOf(order.error), seen);
  if (hook.passphraseHash !== null && (payload.passphrase === undefined || !sameSecret(payload.passphrase, hook.passphraseHash, hook.id))) {
    return { ok: false, refusal: { outcome: 'refused', code: 'FORBIDDEN', message: 'The passphrase does not match this hook’s', seen } };
  }
  if (payload.timestamp !== undefined) {
    const firedAt = signalTimeOf(payload.timestamp);
    if (!firedAt) return invalid('Signal validation failed', [{ path: 'timestamp', message: 'must be ISO 8601 with an offset, or Unix seconds' }], seen);
    const lagSec = (at.getTime() - firedAt.getTime()) / 1000;
    if (lagSec > hook.maxLagSec) return invalid(`The alert is stale: it fired ${Math.floor(lagSec)} s ago, more than this hook’s max_lag_sec of ${hook.maxLagSec}`, [{ path: 'timestamp', message: `older than max_lag_sec (${hook.maxLagSec} s)` }], seen);
    if (-lagSec > hook.maxLagSec) return invalid(`The alert's timestamp is ${Math.ceil(-lagSec)} s in the future`, [{ path: 'timestamp', message: `more than max_lag_sec (${hook.maxLagSec} s) in the future` }], seen);
  }
  return { ok: true, payload, order: order.data };
};

/** The order a signal asks its hook's account for, with `qty` units; the client order id is set by the placement. */
export const orderRequestOf = (hook: Pick<SignalWebhookRow, 'assetClass' | 'mode'>, payload: TSignalPayload, qty: number): Record<string, unknown> => ({
  asset_class: hook.assetClass,
  symbol: payload.symbol,
  side: payload.side,
  qty,
  order_type: payload.order_type,
  ...(payload.limit_price === undefined ? {} : { limit_price: payload.limit_price }),
  ...(payload.stop_price === undefined ? {} : { stop_price: payload.stop_price }),
  ...(payload.time_in_force === undefined ? {} : { time_in_force: payload.time_in_force }),
  live_mode: hook.mode === 'live',
});

/** The payload as a signal keeps it: its passphrase never is. */
export const storedPayloadOf = ({ passphrase: _passphrase, ...kept }: TSignalPayload): Record<string, unknown> => kept;

/** A stored payload read back (validated again: the row is ours, but the schema is the contract). */
export const payloadOfStored = (stored: Record<string, unknown> | null): TSignalPayload | undefined => {
  const parsed = ZSignalPayload.safeParse(stored ?? undefined);
  return parsed.success ? parsed.data : undefined;
};
