// The five gates an order passes, in this order: flags → rate limit → broker configured → risk →
// broker call. The first four are here (the risk gate in risk-gate.ts), each a small named function
// that throws the AppError of its refusal; the fifth, the broker call, is the order service's own
// step (it creates the order).
import { brokerError } from '../brokers/errors.ts';
import { brokerOrderTypeOf, type Broker } from '../brokers/types.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderType } from '../../contracts/orders.ts';
import type { Config } from '../config.ts';
import { utcDateOf } from '../controls/day-start.ts';
import type { Queryable } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { emergencyLockError } from './risk.ts';
import { riskGate } from './risk-gate.ts';
import { claimRate, rateWindowStart, releaseRate, type RateClaim } from '../controls/rate-queries.ts';
import type { GateDeps, OrderAttempt, TGateName } from './attempt.ts';
import type { IntentOutcome } from './write-queries.ts';

const MINUTE_MS = 60_000;
export const MINUTE_SCOPE = 'minute';
export const liveScope = (assetClass: TAssetClass) => `live:${assetClass}`;

/**
 * The flag rule itself: paper needs FEATURE_EQUITY_PAPER; live needs FEATURE_EQUITY_LIVE,
 * ALLOW_LIVE=1, no operator suspension and the user's live flag. The bot checks it too when it
 * starts.
 */
export const checkTradingFlags = (
  { mode, assetClass, liveEnabled }: Pick<OrderAttempt, 'mode' | 'assetClass' | 'liveEnabled'>,
  config: Config,
  liveSuspended = false,
): void => {
  if (mode === 'paper') {
    if (!config.FEATURE_EQUITY_PAPER) throw new AppError('FEATURE_DISABLED', 'Paper trading is disabled (FEATURE_EQUITY_PAPER)');
    return;
  }
  if (!config.FEATURE_EQUITY_LIVE || !config.ALLOW_LIVE) throw new AppError('FEATURE_DISABLED', 'Live trading is disabled on this service');
  if (liveSuspended) throw new AppError('FEATURE_DISABLED', 'Live orders are suspended by an operator');
  if (!liveEnabled) throw new AppError('LIVE_NOT_ENABLED', `Live trading is not enabled for ${assetClass}`);
};

/**
 * 1. The flags (checkTradingFlags). A liquidation passes: positions must be closable whatever the
 * switches say.
 */
const flagsGate = (attempt: OrderAttempt, { config, liveSuspended }: GateDeps): void => {
  if (attempt.liquidation) return;
  checkTradingFlags(attempt, config, liveSuspended());
};

/** The attempt's unit of the per-minute limit, counted at `at`. */
export const minuteClaimOf = (attempt: OrderAttempt, { clock, config }: Pick<GateDeps, 'clock' | 'config'>): RateClaim => {
  const at = clock.now();
  return { userId: attempt.userId, scope: MINUTE_SCOPE, windowStart: new Date(at.getTime() - MINUTE_MS), at, max: config.RATE_LIMIT_ORDERS_PER_MIN };
};

/** The 429 of a full minute window: Retry-After is when the window that refused ends. */
export const minuteLimitError = (windowStartedAt: Date, at: Date, config: Config) =>
  new AppError('RATE_LIMIT_EXCEEDED', `More than ${config.RATE_LIMIT_ORDERS_PER_MIN} orders a minute`, {
    retryAfterSec: Math.max(1, Math.ceil((windowStartedAt.getTime() + MINUTE_MS - at.getTime()) / 1000)),
  });

/** Gives back the rate units the attempt claimed (it ends without an accepted order). */
export const releaseClaims = async (db: Queryable, attempt: OrderAttempt) => {
  for (const scope of attempt.claimed) await releaseRate(db, { userId: attempt.userId, scope });
};

/** Claims the attempt's unit of the per-minute limit now; 429 when none is left. */
const claimMinute = async (attempt: OrderAttempt, deps: GateDeps) => {
  const claim = minuteClaimOf(attempt, deps);
  const minute = await claimRate(deps.db, claim);
  if (!minute.counted) throw minuteLimitError(minute.windowStartedAt, claim.at, deps.config);
  attempt.countedThisMinute = true;
};

/**
 * 2. Orders per minute per user, and live orders per UTC day per asset class, counted in the
 * database. A paper order's minute unit is claimed in the statement that writes its intent once
 * the later gates pass (one round trip and one commit less), or by runGates when one of them
 * refuses: either way every attempt counts, and a full window answers before a later gate.
 * Placements, replaces and closes count (DESIGN §6); a replace or a close claims its unit here,
 * as a live order does: a replace writes no intent, and a close cancels before it writes one.
 */
const rateLimitGate = async (attempt: OrderAttempt, deps: GateDeps) => {
  if (attempt.liquidation) return;
  if (attempt.mode === 'paper' && !attempt.replacing && !attempt.closing) {
    attempt.minuteClaimDeferred = true;
    return;
  }
  await claimMinute(attempt, deps);
  // The daily live limit counts new live orders: a replace changes one already counted.
  if (attempt.mode === 'paper' || attempt.replacing) return;
  const { db, clock, config } = deps;
  const at = clock.now();
  const midnight = new Date(`${utcDateOf(at)}T00:00:00.000Z`);
  const day = await claimRate(db, { userId: attempt.userId, scope: liveScope(attempt.assetClass), windowStart: midnight, at, max: config.LIVE_DAILY_TRADE_LIMIT });
  if (!day.counted) {
    const retryAfterSec = Math.max(1, Math.ceil((midnight.getTime() + 86_400_000 - at.getTime()) / 1000));
    throw new AppError('RATE_LIMIT_LIVE_DAILY', `The daily limit of ${config.LIVE_DAILY_TRADE_LIMIT} live orders is reached; it resets at 00:00 UTC`, { retryAfterSec });
  }
  attempt.claimed.push(liveScope(attempt.assetClass));
};

/** The types the order emulator holds for a simple order: it watches their stops on the broker's quote stream. */
const EMULATED_TYPES: ReadonlySet<TOrderType> = new Set(['trailing_stop', 'stop', 'stop_limit']);

/**
 * Whether the order emulator holds what the broker does not: a simple trailing stop, stop or
 * stop-limit, or an OCO (a sell limit and its stop leg: two triggers), watched on the broker's
 * quote stream, so only where the broker streams quotes.
 */
const emulatable = (attempt: OrderAttempt, broker: Broker): boolean => {
  if (broker.quotes === undefined) return false;
  if (attempt.orderClass === 'oco') return attempt.orderType === 'limit' && attempt.bracket !== null;
  return EMULATED_TYPES.has(attempt.orderType) && attempt.orderClass === 'simple' && attempt.bracket === null;
};

/** Whether the broker holds the order's type itself: for a stop or a stop-limit, at the symbol's market where that is the broker's word. */
const holdsNatively = async ({ orderType, instrument }: OrderAttempt, broker: Broker): Promise<boolean> => {
  if ((orderType === 'stop' || orderType === 'stop_limit') && broker.nativeStopsOf && instrument) {
    const stops = await broker.nativeStopsOf(instrument.symbol);
    return orderType === 'stop' ? stops.stop : stops.stopLimit;
  }
  return broker.nativeOrderTypes.has(brokerOrderTypeOf(orderType));
};

/**
 * 3. An active key of the user for the asset class (403 BROKER_NOT_CONFIGURED otherwise), whose
 * broker holds the order's type and class, or whose type or class the order emulator holds for it
 * (`emulated`: the whole order; `emulatedExits`: a bracket's or an oto's exits, the entry native);
 * 422 BROKER_REJECTED naming what it lacks otherwise, before any call.
 */
const brokerConfiguredGate = async (attempt: OrderAttempt, { forUser }: GateDeps) => {
  const broker = await forUser({ userId: attempt.userId, assetClass: attempt.assetClass, mode: attempt.mode });
  attempt.broker = broker;
  const nativeType = await holdsNatively(attempt, broker);
  const nativeClass = attempt.orderClass === 'simple' || broker.nativeOrderClasses.has(attempt.orderClass);
  const nativeLeg = !attempt.bracket?.trail || broker.nativeTrailingLegs;
  attempt.emulated = !(nativeType && nativeClass && nativeLeg) && emulatable(attempt, broker);
  if (attempt.emulated) return;
  // An entry the broker holds, whose exits it does not: they are the emulator's.
  attempt.emulatedExits = nativeType && !(nativeClass && nativeLeg) && (attempt.orderClass === 'bracket' || attempt.orderClass === 'oto') && broker.quotes !== undefined;
  if (attempt.emulatedExits) return;
  if (!nativeType) throw new AppError('BROKER_REJECTED', `The ${broker.name} broker does not take ${attempt.orderType} orders through this service yet`);
  if (!nativeClass) throw new AppError('BROKER_REJECTED', `The ${broker.name} broker does not take ${attempt.orderClass} orders through this service yet`);
  if (!nativeLeg) throw new AppError('BROKER_REJECTED', `The ${broker.name} broker does not take a trailing stop leg in a bracket through this service yet`);
};

export const GATES: readonly { name: Exclude<TGateName, 'broker'>; check: (attempt: OrderAttempt, deps: GateDeps) => Promise<void> | void }[] = [
  { name: 'flags', check: flagsGate },
  { name: 'rate_limit', check: rateLimitGate },
  { name: 'broker_configured', check: brokerConfiguredGate },
  { name: 'risk', check: riskGate },
];

/** A refusal at one of the first four gates: which gate, and the error it answers with. */
export class GateRefusal extends Error {
  readonly gate: TGateName;
  readonly error: AppError;
  constructor(gate: TGateName, error: AppError) {
    super(error.message);
    this.name = 'GateRefusal';
    this.gate = gate;
    this.error = error;
  }
}

const refusalOf = (gate: TGateName, error: unknown): GateRefusal | undefined => {
  if (error instanceof AppError) return new GateRefusal(gate, error);
  // The risk gate reads the account through the broker: a broker that fails there fails the order,
  // and a real broker may refuse the reads themselves (a key it no longer takes): its refusal, not a 500.
  const answer = brokerError(error, 'read');
  return answer && new GateRefusal(gate, answer);
};

/**
 * The gates' checks that a paper order's intent statement makes with its write, each declared
 * by its gate: the minute's rate unit (the rate limit left it to the write) and the emergency
 * lock (the risk gate's first rule for a buy, when it was not read before the gates; the lock
 * judges buys only). A full window or a running lock then writes nothing.
 */
export interface DeferredChecks {
  claim: RateClaim | undefined;
  lockCheck: { at: Date } | undefined;
}

export const deferredChecksOf = (attempt: OrderAttempt, deps: Pick<GateDeps, 'clock' | 'config'>, at: Date): DeferredChecks => ({
  claim: attempt.minuteClaimDeferred ? minuteClaimOf(attempt, deps) : undefined,
  lockCheck: attempt.lockedUntil === undefined && attempt.side === 'buy' ? { at } : undefined,
});

/**
 * What the intent statement's deferred checks decided, as their gates decide: undefined when
 * they passed; else the refusing gate's refusal, the rate limit's before the risk gate's as the
 * gates run. The refusal is made on demand: an attempt that turns out to be a copy of an order
 * made meanwhile answers as its replay instead, and reads nothing for it.
 */
export const deferredRefusalOf = (
  attempt: OrderAttempt,
  checks: DeferredChecks,
  { claimed, lockedUntil }: Pick<IntentOutcome, 'claimed' | 'lockedUntil'>,
  { db, config }: Pick<GateDeps, 'db' | 'config'>,
): (() => Promise<GateRefusal>) | undefined => {
  const { claim } = checks;
  if (claim && claimed) attempt.countedThisMinute = true;
  if (claim && !claimed) {
    return async () => {
      const windowStartedAt = await rateWindowStart(db, { userId: attempt.userId, scope: claim.scope, at: claim.at });
      return new GateRefusal('rate_limit', minuteLimitError(windowStartedAt, claim.at, config));
    };
  }
  if (lockedUntil) {
    return () => {
      attempt.lockedUntil = lockedUntil;
      return Promise.resolve(new GateRefusal('risk', emergencyLockError(lockedUntil)));
    };
  }
  return undefined;
};

/**
 * The checks a fired trigger's child meets before it goes to the broker (DESIGN §6): every gate
 * but the rate limit and the emergency lock, since it is an exit of an order that passed them
 * when it was placed. Throws the refusing gate's GateRefusal.
 */
export const runChildGates = async (attempt: OrderAttempt, deps: GateDeps): Promise<void> => {
  // Known, and none: the risk gate judges the child as if no lock ran, and never reads one.
  attempt.lockedUntil = null;
  for (const gate of GATES) {
    if (gate.name === 'rate_limit') continue;
    try {
      await gate.check(attempt, deps);
    } catch (error) {
      throw refusalOf(gate.name, error) ?? error;
    }
  }
};

/** Runs the first four gates in order; the first refusal ends the attempt. */
export const runGates = async (attempt: OrderAttempt, deps: GateDeps): Promise<void> => {
  for (const gate of GATES) {
    try {
      await gate.check(attempt, deps);
    } catch (error) {
      const refusal = refusalOf(gate.name, error);
      if (!refusal) throw error;
      if (attempt.minuteClaimDeferred) {
        // A refused attempt counts too, and a full window is the answer that comes first.
        attempt.minuteClaimDeferred = false;
        try {
          await claimMinute(attempt, deps);
        } catch (claimError) {
          throw refusalOf('rate_limit', claimError) ?? claimError;
        }
      }
      throw refusal;
    }
  }
};
