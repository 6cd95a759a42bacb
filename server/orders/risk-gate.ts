// Gate 4, the risk manager, on the broker's own view of the account and the price: it builds
// the risk rules' view of the attempt (risk.ts judges it) and leaves the books the sizing rule to
// judge again under the account's lock.
import { ExactDecimal } from '../decimal.ts';
import type { BrokerSnapshot } from '../brokers/types.ts';
import { utcDateOf } from '../controls/day-start.ts';
import { findLock } from '../controls/queries.ts';
import { previousSessionClose } from '../marketdata/queries.ts';
import { KRX_TIME_ZONE } from '../markets/krx.ts';
import { localDateTimeOf } from '../markets/zoned.ts';
import type { GateDeps, OrderAttempt } from './gates.ts';
import { firstStopOf, trailOf } from './trailing.ts';
import { checkRisk, riskRefusalError, riskSettingsFromConfig, sizingJudgeOf, type RiskAttempt } from './risk.ts';
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

/** 4. The risk manager, on the broker's own view of the account and the price. */
export const riskGate = async (attempt: OrderAttempt, { db, clock, config, dayStart }: GateDeps) => {
  const { instrument, broker } = attempt;
  // An unregistered symbol has no price to judge: the broker call refuses it.
  if (!instrument || !broker) return;
  const at = clock.now();
  const [{ account, positions, openOrders: brokerOrders }, previousClose, emulated] = await Promise.all([
    // The risk rules read the working orders of this symbol only.
    attempt.snapshot ?? broker.snapshot({ symbol: instrument.symbol }),
    attempt.assetClass === 'kr_equity' ? previousSessionClose(db, { assetClass: instrument.assetClass, symbol: instrument.symbol, before: localDateTimeOf(at, KRX_TIME_ZONE).date }) : Promise.resolve(undefined),
    // What the order emulator holds, which the broker's figures do not net (only a broker with a
    // quote stream has emulated orders: the simulator's placements read nothing more).
    broker.quotes ? emulatedWorkingOrders(db, attempt, instrument.symbol).then((orders) => orders.filter((order) => order.clientOrderId !== attempt.siblingOf)) : Promise.resolve([]),
  ]);
  const openOrders = [...brokerOrders, ...emulated];
  const held = positions.find((position) => position.symbol === instrument.symbol);
  const dayStartOf = await dayStart({ userId: attempt.userId, assetClass: attempt.assetClass, mode: attempt.mode, day: utcDateOf(at), equity: account.equity, cash: account.cash, at, resetAt: account.resetAt });
  const referencePrice = new ExactDecimal(held?.currentPrice ?? (await broker.quote(instrument.symbol)));
  const settings = riskSettingsFromConfig(config);
  // A replace is judged with its own hold given back; a close without the sells it cancels.
  const replaced = attempt.replacing && openOrders.find((order) => order.brokerOrderId === attempt.replacing?.brokerOrderId);
  const buyingPowerLeft = buyingPowerBesides(attempt.assetClass, account.buyingPower, emulated).toFixed();
  const buyingPower = replaced ? buyingPowerWithout(attempt.assetClass, buyingPowerLeft, replaced, referencePrice) : new ExactDecimal(buyingPowerLeft);
  // A trailing stop is judged as the stop it starts as: its trail from the current price.
  const { trail } = attempt;
  const firstStop = trail && firstStopOf({ side: attempt.side, price: referencePrice, trail, instrument });
  const riskAttemptWith = (lockedUntil: Date | null | undefined): RiskAttempt => ({
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
    previousClose: previousClose === undefined ? undefined : new ExactDecimal(previousClose),
    tickRule: instrument.tickRule,
    tickSize: new ExactDecimal(instrument.tickSize),
    account: { equity: new ExactDecimal(account.equity), buyingPower },
    ...positionOf({ positions, openOrders: workingOrdersBesides(attempt, openOrders) }, instrument.symbol),
    dayStartEquity: new ExactDecimal(dayStartOf.equity),
    dayFlows: new ExactDecimal(dayStartOf.flows),
    lockedUntil: lockedUntil && lockedUntil > at ? lockedUntil : null,
    at,
  });
  const verdictWith = (lockedUntil: Date | null | undefined) => checkRisk(riskAttemptWith(lockedUntil), settings);
  let verdict = verdictWith(attempt.lockedUntil);
  if (!verdict.ok && attempt.lockedUntil === undefined && attempt.side === 'buy') {
    // The lock is the first rule for a buy: a running one answers before the refusal found without it.
    attempt.lockedUntil = (await findLock(db, { userId: attempt.userId, assetClass: attempt.assetClass }))?.lockedUntil ?? null;
    verdict = verdictWith(attempt.lockedUntil);
  }
  if (!verdict.ok) throw riskRefusalError(verdict);
  // Judged again under the account's lock where the books allow it (the simulator's placement).
  attempt.sizingUnderLock = sizingJudgeOf(riskAttemptWith(attempt.lockedUntil), settings);
};
