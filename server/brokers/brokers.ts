// The brokers area: each user's broker (through the registry), the paper-account reset, and the
// operator's controls of the simulated broker (prices, outages). Built once in the composition root.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TAccountResponse, TSimPriceRequest } from '../../contracts/simulator.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import { findLock } from '../controls/queries.ts';
import type { Db } from '../db/client.ts';
import type { ChangeFeed } from '../events/changes.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { brokerError } from './errors.ts';
import { createBrokerRegistry, type RealBrokerParts } from './registry.ts';
import type { Simulator } from './simulator/index.ts';
import type { BrokerAccount } from './types.ts';

export const toAccountResponse = (assetClass: TAssetClass, account: BrokerAccount, metadata: Record<string, unknown> = {}): TAccountResponse => ({
  asset_class: assetClass,
  broker: account.broker,
  paper: account.paper,
  equity: Number(account.equity),
  buying_power: Number(account.buyingPower),
  cash: Number(account.cash),
  currency: account.currency,
  as_of: account.asOf.toISOString(),
  metadata,
});

export type Brokers = ReturnType<typeof createBrokers>;

export const createBrokers = ({ db, clock, simulator, instruments, changes, real }: { db: Db; clock: Clock; simulator: Simulator; instruments: Instruments; changes: ChangeFeed; real?: RealBrokerParts | undefined }) => {
  const registry = createBrokerRegistry({ db, simulator, changes, real });

  /** Starts the user's paper account of an asset class over: open orders canceled, positions gone, starting cash. */
  const resetPaperAccount = async ({ user, assetClass, origin }: { user: { id: number }; assetClass: TAssetClass; origin: RequestOrigin }): Promise<TAccountResponse> => {
    // The account is the user's broker's: without a key for the asset class there is none to reset.
    await registry.forUser({ userId: user.id, assetClass, mode: 'paper' });
    // A real broker's paper account is reset at the broker (its own dashboard), not by this service.
    if (real) throw new AppError('FEATURE_DISABLED', 'Resetting a paper account is for the simulated broker; with BROKER_MODE=real reset it at the broker');
    // A reset would wipe the losses an emergency lock answers to: not while it holds.
    const lock = await findLock(db, { userId: user.id, assetClass });
    if (lock && lock.lockedUntil > clock.now()) throw new AppError('RISK_RULE_VIOLATION', `An emergency lock holds ${assetClass} until ${lock.lockedUntil.toISOString()}`);
    let reset;
    try {
      reset = await simulator.resetAccount({ userId: user.id, assetClass });
    } catch (error) {
      throw brokerError(error, 'reset') ?? error;
    }
    await recordAudit(db, { action: 'account.reset', actorUserId: user.id, subjectUserId: user.id, origin, data: { asset_class: assetClass, canceled_orders: reset.canceledOrders }, at: clock.now() });
    return toAccountResponse(assetClass, reset.account, { canceled_orders: reset.canceledOrders });
  };

  const setPrice = async ({ actor, input, origin }: { actor: { id: number }; input: TSimPriceRequest; origin: RequestOrigin }) => {
    const instrument = await instruments.resolve({ symbol: input.symbol, assetClass: input.asset_class });
    if (!instrument) {
      const message = `is not a registered ${input.asset_class} instrument`;
      throw new AppError('VALIDATION_ERROR', `symbol ${message}`, { errors: [{ path: 'symbol', message }] });
    }
    const update = await simulator.setPrice({ assetClass: instrument.assetClass, symbol: instrument.symbol, price: input.price === null ? null : String(input.price) });
    await recordAudit(db, { action: 'admin.sim_price', actorUserId: actor.id, origin, data: { asset_class: instrument.assetClass, symbol: instrument.symbol, price: input.price }, at: clock.now() });
    return { asset_class: update.assetClass, symbol: update.symbol, price: Number(update.price), source: update.source, at: update.at };
  };

  const setOutage = async ({ actor, assetClass, down, origin }: { actor: { id: number }; assetClass: TAssetClass; down: boolean; origin: RequestOrigin }) => {
    const outages = await simulator.setOutage({ assetClass, down, by: String(actor.id) });
    await recordAudit(db, { action: 'admin.sim_outage', actorUserId: actor.id, origin, data: { asset_class: assetClass, down }, at: clock.now() });
    return outages;
  };

  return { forUser: registry.forUser, release: registry.release, forKeys: registry.forKeys, resetPaperAccount, setPrice, setOutage };
};
