// A bracket's or an oto's exits held by the order emulator (DESIGN §6 "Advanced orders"), where
// the broker holds the entry but not the class or its trailing leg (KIS and ccxt exchanges hold
// no brackets; Alpaca no trailing leg inside one): the entry goes to the broker alone, and each of
// its fills arms its exit legs in the fill's own transaction, for the quantity filled so far (the
// legs grow with each fill): the take-profit `<id>:tp` (a limit trigger) and the stop leg
// `<id>:sl` (a stop, a stop-limit, or a trailing stop trailing from the fill), an OCO pair when
// both are there. The account's watch holds them as it holds any trigger.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { bracketChildClientOrderId, type TOrderEvent } from '../../../contracts/orders.ts';
import type { BrokerOrderRequest, TBrokerEvent } from '../../brokers/types.ts';
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/client.ts';
import type { InstrumentRow, OrderRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId } from '../queries.ts';
import { orderEventOf } from '../records.ts';
import { HWM, TRAIL_PERCENT, TRAIL_PRICE } from '../trailing.ts';
import { insertOrderIntent, updateOrder } from '../write-queries.ts';
import { armOf, expiryOf, type TArmed } from './arm.ts';
import { growTrigger, insertTrigger, workingTriggerForUpdate } from './trigger-queries.ts';

/** The entry's metadata flag: its exits are the emulator's. */
export const EMULATED_EXITS = 'emulated_exits';

/** The entry as its broker is sent it: alone, without the exits it cannot hold. */
export const entryAloneOf = (request: BrokerOrderRequest): BrokerOrderRequest => {
  const { orderClass: _class, ...alone } = request;
  return { ...alone, bracket: null };
};

type TLeg = { clientOrderId: string; armed: TArmed; metadata: Record<string, unknown> };

/** The exit legs of an entry that filled at `price`: what its bracket row asks for, named for their pair (`:tp`, `:tp.2`, ...). */
const legsOf = (entry: OrderRow, price: Decimal, instrument: Pick<InstrumentRow, 'assetClass' | 'tickRule' | 'tickSize'>, pair: number): TLeg[] => {
  const bracket = entry.bracket;
  if (!bracket) return [];
  const legs: TLeg[] = [];
  if (bracket.take_profit != null) {
    const level = String(bracket.take_profit);
    legs.push({
      clientOrderId: bracketChildClientOrderId(entry.clientOrderId, 'take_profit', pair),
      armed: { orderType: 'limit', stopPrice: level, limitPrice: level, hwm: null, trailPercent: null, trailPrice: null },
      metadata: {},
    });
  }
  const trail = bracket.trail_percent != null ? { [TRAIL_PERCENT]: bracket.trail_percent } : bracket.trail_price != null ? { [TRAIL_PRICE]: bracket.trail_price } : null;
  if (trail) {
    // A trailing leg trails from the entry's fill (DESIGN §6).
    const armed = armOf({ orderType: 'trailing_stop', side: 'sell', stopPrice: null, limitPrice: null, metadata: trail }, price, instrument);
    legs.push({ clientOrderId: bracketChildClientOrderId(entry.clientOrderId, 'stop_loss', pair), armed, metadata: { ...trail, [HWM]: Number(armed.hwm) } });
  } else if (bracket.stop_loss != null) {
    // A fixed stop is armed as asked, even where the fill is already past it: it fires at the next trade.
    const limit = bracket.stop_loss_limit == null ? null : String(bracket.stop_loss_limit);
    legs.push({
      clientOrderId: bracketChildClientOrderId(entry.clientOrderId, 'stop_loss', pair),
      armed: { orderType: limit === null ? 'stop' : 'stop_limit', stopPrice: String(bracket.stop_loss), limitPrice: limit, hwm: null, trailPercent: null, trailPrice: null },
      metadata: limit === null ? {} : { stop_limit_price: Number(limit) },
    });
  }
  return legs;
};

const orderTypeOfLeg = (armed: TArmed): OrderRow['orderType'] => armed.orderType;

export interface ExitDeps {
  clock: Clock;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents'>;
  instruments: { resolve: (lookup: { symbol: string; assetClass: OrderRow['assetClass'] }) => Promise<InstrumentRow | undefined> };
}

/**
 * The entry's pair of exits a fill joins: the last pair made while one of its legs still waits for
 * its trigger (`working`, the legs to grow), else the next pair (a first fill's, or one after the
 * last pair ended: a leg sold what it protected, or its owner canceled it).
 */
const pairOfFill = async (tx: Tx, entry: OrderRow, legNames: readonly ('take_profit' | 'stop_loss')[]): Promise<{ pair: number; working: boolean }> => {
  for (let pair = 1; ; pair += 1) {
    const keys = legNames.map((leg) => ({ userId: entry.userId, clientOrderId: bracketChildClientOrderId(entry.clientOrderId, leg, pair) }));
    const made = await Promise.all(keys.map((key) => findOrderByClientId(tx, { ...key, forUpdate: true })));
    if (made.every((row) => row === undefined)) return { pair, working: false };
    const waiting = await Promise.all(keys.map((key) => workingTriggerForUpdate(tx, key)));
    if (waiting.some((trigger) => trigger !== undefined)) return { pair, working: true };
  }
};

/**
 * Arms (or grows) an entry's exit legs with a fill, in the fill's transaction, as the simulator's
 * brackets do: the first fill makes the pair (its order rows and triggers) for the quantity filled;
 * a later fill grows the working legs of the pair by what it filled; a fill after the pair ended
 * makes a new pair (`:tp.2`, `:sl.2`, ...) for what that fill bought. Answers the legs' frames.
 */
export const createExits = ({ clock, audit, publisher, instruments }: ExitDeps) =>
  async (tx: Tx, entry: OrderRow, fill: NonNullable<TBrokerEvent['fill']>): Promise<TOrderEvent[]> => {
    if (entry.metadata[EMULATED_EXITS] !== true || entry.side !== 'buy') return [];
    const instrument = await instruments.resolve({ symbol: entry.symbol, assetClass: entry.assetClass });
    if (!instrument) return [];
    const at = clock.now();
    const bracket = entry.bracket;
    const legNames = [...(bracket?.take_profit != null ? (['take_profit'] as const) : []), ...(bracket?.stop_loss != null || bracket?.trail_percent != null || bracket?.trail_price != null ? (['stop_loss'] as const) : [])];
    const { pair, working } = await pairOfFill(tx, entry, legNames);
    const legs = legsOf(entry, new ExactDecimal(fill.price), instrument, pair);
    const siblingOf = (leg: TLeg) => legs.find((other) => other !== leg)?.clientOrderId ?? null;
    // The first pair protects all the entry has filled (its early fills came with it); a later one, this fill.
    const qty = pair === 1 ? entry.filledQty : new ExactDecimal(fill.qty).toFixed();
    const frames: TOrderEvent[] = [];
    for (const leg of legs) {
      const key = { userId: entry.userId, clientOrderId: leg.clientOrderId };
      if (working) {
        const trigger = await workingTriggerForUpdate(tx, key);
        if (!trigger) continue;
        // Grown by what this fill bought (a leg that sold a part keeps protecting only the rest).
        const grownQty = new ExactDecimal(trigger.qty).plus(fill.qty).toFixed();
        await growTrigger(tx, key, { qty: grownQty, at });
        const grown = (await updateOrder(tx, key, { qty: grownQty, updatedAt: at }))!;
        await audit(tx, grown, 'order.replaced', { emulated: true, qty: grownQty, entry_filled_qty: entry.filledQty });
        frames.push(...(await publisher.appendEvents(tx, grown, [orderEventOf(grown, 'replaced', { emulated: true, qty: grownQty }, at)])));
        continue;
      }
      // An immediate-or-cancel entry's exits last its day.
      const legTimeInForce = entry.timeInForce === 'ioc' || entry.timeInForce === 'fok' ? 'day' : entry.timeInForce;
      const row = (await insertOrderIntent(tx, {
        userId: entry.userId,
        clientOrderId: leg.clientOrderId,
        brokerOrderId: `emu-${randomUUID()}`,
        assetClass: entry.assetClass,
        live: entry.live,
        broker: entry.broker,
        symbol: entry.symbol,
        side: 'sell',
        orderType: orderTypeOfLeg(leg.armed),
        timeInForce: legTimeInForce,
        qty,
        limitPrice: leg.armed.limitPrice,
        stopPrice: leg.armed.orderType === 'limit' ? null : leg.armed.stopPrice,
        status: 'open',
        bracket: null,
        metadata: { source: entry.metadata.source, parent_client_order_id: entry.clientOrderId, emulated: true, ...leg.metadata },
        requestHash: null,
        submittedAt: at,
        updatedAt: at,
      }))!;
      await insertTrigger(tx, {
        userId: entry.userId,
        clientOrderId: leg.clientOrderId,
        assetClass: entry.assetClass,
        live: entry.live,
        symbol: entry.symbol,
        side: 'sell',
        qty,
        ...leg.armed,
        siblingClientOrderId: siblingOf(leg),
        status: 'working',
        expiresAt: expiryOf({ assetClass: entry.assetClass, timeInForce: legTimeInForce }, at),
        armedAt: at,
        updatedAt: at,
      });
      await audit(tx, row, 'order.placed', { origin: 'emulator', parent: entry.clientOrderId });
      frames.push(...(await publisher.appendEvents(tx, row, [orderEventOf(row, 'accepted', { emulated: true, parent_client_order_id: entry.clientOrderId }, at)])));
    }
    return frames;
  };
