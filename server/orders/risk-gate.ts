// Gate 4, the risk manager, on the broker's own view of the account and the price: it builds
// the risk rules' view of the attempt (risk.ts judges it). Where the account's books are in this
// database (a paper placement), it judges nothing here: it hands the placement's transaction the
// same judgement, made on the account as read with its lock (reservation, availability and sizing
// decided atomically with the placement), so no snapshot is read before it.
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';
import type { Queryable } from '../db/client.ts';
import type { InstrumentRow } from '../db/schema/index.ts';
import type { BrokerSnapshot } from '../brokers/types.ts';
import { utcDateOf } from '../controls/day-start.ts';
import { findLock } from '../controls/queries.ts';
import { previousSessionClose } from '../marketdata/queries.ts';
import { KRX_TIME_ZONE } from '../markets/krx.ts';
import { localDateTimeOf } from '../markets/zoned.ts';
import type { GateDeps, OrderAttempt } from './attempt.ts';
import { firstStopOf, trailOf } from './trailing.ts';
import { checkRisk, riskRefusalError, riskSettingsFromConfig, type RiskAttempt, type RiskVerdict } from './risk.ts';
import { buyingPowerWithout, positionOf } from './risk/exposure.ts';
import { ocoGroupOf } from '../brokers/funds.ts';
import { buyingPowerBesides, emulatedWorkingOrders } from './emulator/held.ts';

const decimalOrUndefined = (value: string | null) => (value === null ? undefined : new ExactDecimal(value));

/**
 * The account's working orders as they will stand beside the attempt: a replaced order is the
 * attempt itself (its OCO pair's hold is its own), and a close cancels the symbol's working sells
 * before it sells.
 */
const workingOrdersBesides = ({ replacing, closing, instrument }: OrderAttempt, openOrders: BrokerSnapshot['openOrders']) => {
  const groupOf = (order: BrokerSnapshot['openOrders'][number]) => ocoGroupOf({ id: order.brokerOrderId, parentId: order.parentId });
  const replaced = replacing && openOrders.find((order) => order.brokerOrderId === replacing.brokerOrderId);
  const replacedGroup = replaced && replaced.side === 'sell' ? groupOf(replaced) : undefined;
  return openOrders.filter(
    (order) =>
      order.brokerOrderId !== replacing?.brokerOrderId &&
      !(replacedGroup !== undefined && order.side === 'sell' && groupOf(order) === replacedGroup) &&
      !(closing && order.side === 'sell' && order.symbol === instrument?.symbol),
  );
};

/** What the risk rules read beside the attempt itself: the market, the account and the position. */
interface RiskFacts {
  at: Date;
  referencePrice: Decimal;
  previousClose: string | undefined;
  account: RiskAttempt['account'];
  heldQty: Decimal;
  position?: RiskAttempt['position'];
  dayStart?: { equity: string; flows: string } | undefined;
}

/** The attempt as the risk rules judge it, on these facts, under this lock. */
const riskAttemptOf = (attempt: OrderAttempt, instrument: InstrumentRow, facts: RiskFacts, lockedUntil: Date | null | undefined): RiskAttempt => {
  const { at, referencePrice } = facts;
  // A trailing stop is judged as the stop it starts as: its trail from the current price.
  const { trail } = attempt;
  const firstStop = trail && firstStopOf({ side: attempt.side, price: referencePrice, trail, instrument });
  return {
    assetClass: attempt.assetClass,
    side: attempt.side,
    qty: new ExactDecimal(attempt.qty),
    orderType: attempt.orderType === 'trailing_stop' ? 'stop' : attempt.orderType,
    limitPrice: decimalOrUndefined(attempt.limitPrice),
    stopPrice: firstStop ?? decimalOrUndefined(attempt.stopPrice),
    trailPrice: trail && 'price' in trail ? new ExactDecimal(trail.price) : undefined,
    bracket: attempt.bracket && {
      takeProfit: decimalOrUndefined(attempt.bracket.takeProfit),
      stopLoss: decimalOrUndefined(attempt.bracket.stopLoss),
      stopLossLimit: decimalOrUndefined(attempt.bracket.stopLossLimit),
      trail: attempt.bracket.trail && trailOf(attempt.bracket.trail),
    },
    referencePrice,
    previousClose: facts.previousClose === undefined ? undefined : new ExactDecimal(facts.previousClose),
    tickRule: instrument.tickRule,
    tickSize: new ExactDecimal(instrument.tickSize),
    account: facts.account,
    heldQty: facts.heldQty,
    position: facts.position,
    dayStartEquity: facts.dayStart && new ExactDecimal(facts.dayStart.equity),
    dayFlows: facts.dayStart && new ExactDecimal(facts.dayStart.flows),
    lockedUntil: lockedUntil && lockedUntil > at ? lockedUntil : null,
    at,
  };
};

/** The base of the KRX daily price band: the previous session's close (undefined for other markets). */
const previousCloseOf = (db: Queryable, { assetClass }: OrderAttempt, instrument: InstrumentRow, at: Date) =>
  assetClass === 'kr_equity' ? previousSessionClose(db, { assetClass: instrument.assetClass, symbol: instrument.symbol, before: localDateTimeOf(at, KRX_TIME_ZONE).date }) : Promise.resolve(undefined);

/**
 * No account figure is read for a sell judged on its own hold: a sell's rules read none (the
 * sizing and the daily loss judge buys only; its funds are its hold).
 */
const ACCOUNT_NOT_READ: RiskAttempt['account'] = { equity: new ExactDecimal(0), buyingPower: new ExactDecimal(0) };

/**
 * A fired trigger's sell at a broker that sells only what the account holds free: judged on the
 * units its order has held since it was placed (OrderAttempt.sellsItsHold), at the quote that
 * fired it, with no read at the broker. Many stops fire on one fall, and an exchange's per-IP
 * budget would hold each exit behind the others' account reads (test/bench/emulator.ts); what
 * changed outside the service meanwhile (coins sold at the exchange itself) is the broker's own
 * balance check, which refuses the child as the funds rule would, and its order is canceled.
 */
const judgeOnItsHold = async (attempt: OrderAttempt & { quotedPrice: string }, instrument: InstrumentRow, { db, clock, config }: GateDeps) => {
  const at = clock.now();
  const facts: RiskFacts = {
    at,
    referencePrice: new ExactDecimal(attempt.quotedPrice),
    previousClose: await previousCloseOf(db, attempt, instrument, at),
    account: ACCOUNT_NOT_READ,
    heldQty: new ExactDecimal(attempt.qty),
    position: { symbol: instrument.symbol, working: [] },
  };
  const verdict = checkRisk(riskAttemptOf(attempt, instrument, facts, null), riskSettingsFromConfig(config));
  if (!verdict.ok) throw riskRefusalError(verdict);
};

/** What the rules read beside the account: the KRX band's base and the emulator's working orders. */
interface Beside {
  at: Date;
  previousClose: string | undefined;
  emulated: BrokerSnapshot['openOrders'];
}

/**
 * The risk rules' verdict on the attempt, on the account as `snapshot` reports it, under a lock
 * to be named: the symbol's price is a fired child's quote, else the held position's, else
 * `price` (the books' own), else the broker's quote.
 */
const verdictOn = async (
  attempt: OrderAttempt,
  instrument: InstrumentRow,
  snapshot: BrokerSnapshot,
  { at, previousClose, emulated }: Beside,
  { dayStart, config }: GateDeps,
  underLock?: { tx: Queryable; price: string },
) => {
  const { account, positions, openOrders: brokerOrders } = snapshot;
  const openOrders = [...brokerOrders, ...emulated];
  const held = positions.find((position) => position.symbol === instrument.symbol);
  const dayStartOf = await dayStart({ userId: attempt.userId, assetClass: attempt.assetClass, mode: attempt.mode, day: utcDateOf(at), equity: account.equity, cash: account.cash, at, resetAt: account.resetAt }, underLock?.tx);
  const referencePrice = new ExactDecimal(attempt.quotedPrice ?? held?.currentPrice ?? underLock?.price ?? (await attempt.broker!.quote(instrument.symbol)));
  const settings = riskSettingsFromConfig(config);
  // A replace is judged with its own hold given back; a close without the sells it cancels.
  const replaced = attempt.replacing && openOrders.find((order) => order.brokerOrderId === attempt.replacing?.brokerOrderId);
  const buyingPowerLeft = buyingPowerBesides(attempt.assetClass, account.buyingPower, emulated).toFixed();
  const buyingPower = replaced ? buyingPowerWithout(attempt.assetClass, buyingPowerLeft, replaced, referencePrice) : new ExactDecimal(buyingPowerLeft);
  const facts: RiskFacts = {
    at,
    referencePrice,
    previousClose,
    account: { equity: new ExactDecimal(account.equity), buyingPower },
    ...positionOf({ positions, openOrders: workingOrdersBesides(attempt, openOrders) }, instrument.symbol),
    dayStart: dayStartOf,
  };
  return (lockedUntil: Date | null | undefined): RiskVerdict => checkRisk(riskAttemptOf(attempt, instrument, facts, lockedUntil), settings);
};

/** 4. The risk manager, on the broker's own view of the account and the price. */
export const riskGate = async (attempt: OrderAttempt, deps: GateDeps) => {
  const { db, clock } = deps;
  const { instrument, broker, quotedPrice } = attempt;
  // An unregistered symbol has no price to judge: the broker call refuses it.
  if (!instrument || !broker) return;
  if (attempt.sellsItsHold && attempt.side === 'sell' && broker.sellsOnlyHeld && quotedPrice !== undefined) return judgeOnItsHold({ ...attempt, quotedPrice }, instrument, deps);
  const at = clock.now();
  if (deps.judgesRiskUnderLock?.(attempt)) {
    // Judged in the placement's transaction on the account read with its lock, after the intent
    // statement has checked the lock (a running one writes no intent, and answers first); only
    // the band's base is read now. An account whose books are here has no emulated orders.
    const beside: Beside = { at, previousClose: await previousCloseOf(db, attempt, instrument, at), emulated: [] };
    attempt.riskUnderLock = async (tx, account, price) => {
      const verdict = (await verdictOn(attempt, instrument, account, beside, deps, { tx, price }))(attempt.lockedUntil);
      return verdict.ok ? undefined : verdict;
    };
    return;
  }
  const [snapshot, previousClose, emulated] = await Promise.all([
    // The risk rules read the working orders of this symbol only.
    attempt.snapshot ?? broker.snapshot({ symbol: instrument.symbol }),
    previousCloseOf(db, attempt, instrument, at),
    // What the order emulator holds, which the broker's figures do not net (only a broker with a
    // quote stream has emulated orders: the simulator's placements read nothing more).
    broker.quotes ? emulatedWorkingOrders(db, attempt, instrument.symbol).then((orders) => orders.filter((order) => order.clientOrderId !== attempt.siblingOf)) : Promise.resolve([]),
  ]);
  const verdictWith = await verdictOn(attempt, instrument, snapshot, { at, previousClose, emulated }, deps);
  let verdict = verdictWith(attempt.lockedUntil);
  if (!verdict.ok && attempt.lockedUntil === undefined && attempt.side === 'buy') {
    // The lock is the first rule for a buy: a running one answers before the refusal found without it.
    attempt.lockedUntil = (await findLock(db, { userId: attempt.userId, assetClass: attempt.assetClass }))?.lockedUntil ?? null;
    verdict = verdictWith(attempt.lockedUntil);
  }
  if (!verdict.ok) throw riskRefusalError(verdict);
};
