// What the gates know of one placement (OrderAttempt), filled in as it passes them, and what
// they read it with (GateDeps): shared by the gates (gates.ts, risk-gate.ts), the placement that
// runs them and the commands that build attempts of their own (a replace, a fired trigger's child).
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderClass, TOrderType } from '../../contracts/orders.ts';
import type { Broker, BrokerBracket, BrokerSnapshot } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DayStartEquity } from '../controls/day-start-cache.ts';
import type { Db, Queryable } from '../db/client.ts';
import type { InstrumentRow } from '../db/schema/index.ts';
import type { RiskRefusal } from './risk.ts';

/** A trailing stop's trail as a request gives it: a percent of its mark, or a price distance (decimal text). */
export type TTrailRequest = { percent: string } | { price: string };

export type TGateName = 'flags' | 'rate_limit' | 'broker_configured' | 'risk' | 'broker';

/** What the gates know of one placement; the broker gate fills in `broker`. */
export interface OrderAttempt {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  side: 'buy' | 'sell';
  qty: string;
  orderType: TOrderType;
  limitPrice: string | null;
  stopPrice: string | null;
  /** A trailing stop's trail (decimal text); null for any other type. */
  trail: TTrailRequest | null;
  bracket: BrokerBracket | null;
  orderClass: TOrderClass;
  /** Undefined when the symbol is not registered: the broker call refuses it (BROKER_REJECTED). */
  instrument: InstrumentRow | undefined;
  broker?: Broker;
  /**
   * The broker's view of the account when it was read before the gates, beside the preflight
   * (one wait less); the risk gate reads it itself otherwise. Unused when an earlier gate refuses.
   */
  snapshot?: Promise<BrokerSnapshot>;
  /** The user's live flag for the asset class, as read before the gates. */
  liveEnabled: boolean;
  /**
   * The account's emergency lock (whether or not it has run out), as read before the gates; or
   * undefined, not read (a paper order): the statement that writes the intent checks it, and the
   * risk gate reads it only when another of its rules refuses (the lock's answer comes first).
   */
  lockedUntil: Date | null | undefined;
  /** Rate units claimed so far, given back when the attempt ends without an accepted order. */
  claimed: string[];
  /** Whether this attempt counted toward the per-minute limit (a replay gives it back). */
  countedThisMinute?: boolean;
  /** Whether its per-minute unit is still to be claimed (with the intent, or on a later refusal). */
  minuteClaimDeferred?: boolean;
  /**
   * A kill-switch liquidation (a sell of a held position): it passes the flag and rate gates
   * (DESIGN §6 "Kill switch"), never the broker. Like every sell it passes the lock.
   */
  liquidation?: boolean;
  /**
   * A replace, judged as the order it would become (DESIGN §6): the replaced order is left out
   * of the account's working orders (its hold on the position or the cash is its own), and its
   * unit of the minute is claimed at once (no intent statement follows to claim it).
   */
  replacing?: { brokerOrderId: string };
  /**
   * A position's close: the symbol's working sells are canceled once the gates pass, so they
   * are left out of what the sell may use, and its unit of the minute is claimed before anything
   * is canceled (a full window leaves the position's protective orders in place).
   */
  closing?: boolean;
  /**
   * A fired OCO leg's child (emulator/fire.ts): the client order id of its sibling, still waiting
   * for its trigger, whose hold is the pair's and so the child's own (the first leg to fill ends
   * the other). Left out of the emulated orders' holds it is judged against.
   */
  siblingOf?: string;
  /**
   * A fired trigger's child (emulator/fire.ts): the price of the quote that fired it, the market's
   * price just seen, which the risk gate takes for its reference instead of asking the broker.
   */
  quotedPrice?: string;
  /**
   * A fired trigger's sell: the units it sells are the ones its order has held since it was placed
   * (every order placed meanwhile was judged with that hold: emulator/held.ts), so at a broker that
   * sells only what the account holds free (`Broker.sellsOnlyHeld`) the risk gate judges it on that
   * hold and reads no account (risk-gate.ts).
   */
  sellsItsHold?: boolean;
  /**
   * Set by the broker gate: the order's type is one its broker does not hold but the order
   * emulator does (a simple trailing stop, stop or stop-limit, or an OCO, at a broker that streams
   * quotes): no broker call at placement, triggers instead (server/orders/emulator/).
   */
  emulated?: boolean;
  /**
   * Set by the broker gate: a bracket or an oto whose broker holds the entry but not its class or
   * its trailing leg: the entry goes to the broker alone, its exits are the order emulator's
   * triggers, armed with each fill of the entry (server/orders/emulator/exits.ts).
   */
  emulatedExits?: boolean;
  /**
   * Set by the risk gate when it leaves its rules to the placement's transaction (GateDeps'
   * judgesRiskUnderLock): their refusal on the account as read with its lock (a snapshot's
   * figures) and the symbol's price there, anything else read through that transaction; or undefined.
   */
  riskUnderLock?: ((tx: Queryable, account: BrokerSnapshot, price: string) => Promise<RiskRefusal | undefined>) | undefined;
}

export interface GateDeps {
  db: Db;
  clock: Clock;
  config: Config;
  forUser: (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => Promise<Broker>;
  /** The account's equity at its first evaluation of the UTC day (DayStartEquity). */
  dayStart: DayStartEquity;
  /** Whether an operator has suspended every live order (POST /api/admin/live/suspend). */
  liveSuspended: () => boolean;
  /**
   * Whether the attempt's submission judges the risk rules itself, on the account read under its
   * lock in its transaction (the in-books submission): the risk gate then reads no snapshot.
   */
  judgesRiskUnderLock?: ((attempt: OrderAttempt) => boolean) | undefined;
}
