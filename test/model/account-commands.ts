// The commands of the model-based test: each runs on the model and on the real account, then the
// two are compared (answer, cash, buying power, position, every order's status and fill). A
// command whose answer depends on a rule that is switched off is not run (`check`).
import * as fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import type { AccountModel } from './account-model.ts';
import { D, PARAMS, type Judgement, type ModelOrder, type PlaceRequest, type ReplaceRequest, type Rules, type TKind, type TOutcome, type TSide } from './model-types.ts';
import { START_PRICE, type Harness } from './account-harness.ts';

type Cmd = fc.AsyncCommand<AccountModel, Harness>;

/** A price `permille` thousandths away from `base`, on the grid, or half a tick off it. */
const priceAt = (base: Decimal, permille: number, offGrid = false): Decimal => {
  const onGrid = base.times(new D(1000 + permille).dividedBy(1000)).toNearest(PARAMS.tick, Decimal.ROUND_HALF_UP);
  return offGrid ? onGrid.plus(PARAMS.tick.dividedBy(2)) : onGrid;
};

const allowed = (judgement: Judgement, rules: Rules) => judgement.blockers.every((rule) => rules[rule]);

/** Compares after every command; buying power only where the model and a service without reservation agree on it. */
const compareAfter = async (model: AccountModel, real: Harness, rules: Rules) => {
  await real.compare(model, { buyingPower: rules.reservation || !model.hasWorkingBuy() });
};

const expectOutcome = (actual: TOutcome, expected: TOutcome, what: string) => {
  expect(actual, `answer to ${what}`).toEqual(expected);
};

export interface PlaceSpec {
  side: TSide;
  kind: TKind;
  lots: number;
  permille: number;
  bracket: { tp: number; sl: number } | null;
  offGrid: boolean;
}

/** The request a spec makes against the model's current price (the id comes at run time). */
export const placeRequestOf = (model: AccountModel, spec: PlaceSpec, id = 'probe'): PlaceRequest => {
  // A sell's size is a share of the held quantity (up to 120 % of it, so some oversell): random sizes would almost never fit.
  const sellQty = model.held.times(spec.lots).dividedBy(50_000).toNearest(PARAMS.lot, Decimal.ROUND_DOWN);
  const qty = spec.side === 'sell' ? Decimal.max(sellQty, PARAMS.lot) : PARAMS.lot.times(spec.lots);
  const at = priceAt(model.price, spec.permille, spec.offGrid);
  const limit = spec.kind === 'limit' ? at : undefined;
  const stop = spec.kind === 'stop' ? at : undefined;
  const reference = limit ?? model.price;
  const bracket = spec.bracket && spec.side === 'buy' && spec.kind !== 'stop' ? { tp: priceAt(reference, spec.bracket.tp), sl: priceAt(reference, -spec.bracket.sl) } : undefined;
  return { id, side: spec.side, kind: spec.kind, qty, limit, stop, bracket };
};

export class PlaceCommand implements Cmd {
  private readonly spec: PlaceSpec;
  private readonly rules: Rules;
  constructor(spec: PlaceSpec, rules: Rules) {
    this.spec = spec;
    this.rules = rules;
  }
  check(model: Readonly<AccountModel>) {
    return allowed((model as AccountModel).judgePlace(placeRequestOf(model as AccountModel, this.spec)), this.rules);
  }
  async run(model: AccountModel, real: Harness) {
    const request = placeRequestOf(model, this.spec, real.nextId());
    const expected = model.place(request);
    expectOutcome(await real.place(request), expected, this.toString());
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return `place(${JSON.stringify(this.spec)})`;
  }
}

export interface ReplaceSpec {
  pick: number;
  lots: number | null;
  permille: number | null;
}

/** The plain (not bracket) limit and stop orders a replace may pick from, finished ones included. */
const replaceable = (model: AccountModel): ModelOrder[] => model.orders.filter((order) => (order.kind === 'limit' || order.kind === 'stop') && !order.bracket && !order.leg);

export const replaceRequestOf = (model: AccountModel, spec: ReplaceSpec): ReplaceRequest | undefined => {
  const candidates = replaceable(model);
  const order = candidates[spec.pick % Math.max(candidates.length, 1)];
  if (!order) return undefined;
  const price = spec.permille === null ? undefined : priceAt(model.price, spec.permille);
  return {
    id: order.id,
    qty: spec.lots === null ? undefined : PARAMS.lot.times(spec.lots),
    limit: order.kind === 'limit' ? price : undefined,
    stop: order.kind === 'stop' ? price : undefined,
  };
};

export class ReplaceCommand implements Cmd {
  private readonly spec: ReplaceSpec;
  private readonly rules: Rules;
  constructor(spec: ReplaceSpec, rules: Rules) {
    this.spec = spec;
    this.rules = rules;
  }
  check(model: Readonly<AccountModel>) {
    const change = replaceRequestOf(model as AccountModel, this.spec);
    return change !== undefined && (change.qty !== undefined || change.limit !== undefined || change.stop !== undefined) && allowed((model as AccountModel).judgeReplace(change), this.rules);
  }
  async run(model: AccountModel, real: Harness) {
    const change = replaceRequestOf(model, this.spec)!;
    const expected = model.replace(change);
    expectOutcome(await real.replace(change), expected, this.toString());
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return `replace(${JSON.stringify(this.spec)})`;
  }
}

export class CancelCommand implements Cmd {
  private readonly pick: number;
  private readonly rules: Rules;
  constructor(pick: number, rules: Rules) {
    this.pick = pick;
    this.rules = rules;
  }
  check(model: Readonly<AccountModel>) {
    return model.orders.length > 0;
  }
  async run(model: AccountModel, real: Harness) {
    const order = model.orders[this.pick % model.orders.length]!;
    const expected = model.cancel(order.id);
    expectOutcome(await real.cancel(order.id), expected, this.toString());
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return `cancel(${this.pick})`;
  }
}

export type SimpleName = 'cancelAll' | 'close' | 'reset' | 'lock' | 'unlock';

/** A command without parameters: cancel-all, close, reset, lock, unlock. */
export class SimpleCommand implements Cmd {
  private readonly name: SimpleName;
  private readonly rules: Rules;
  constructor(name: SimpleName, rules: Rules) {
    this.name = name;
    this.rules = rules;
  }
  check(model: Readonly<AccountModel>) {
    switch (this.name) {
      case 'close':
        return !model.held.isZero() && allowed((model as AccountModel).judgeClose(), this.rules);
      case 'lock':
        return !model.locked && allowed((model as AccountModel).judgeLock(), this.rules);
      case 'unlock':
        return model.locked;
      default:
        return true;
    }
  }
  async run(model: AccountModel, real: Harness) {
    switch (this.name) {
      case 'cancelAll':
        expectOutcome(await real.cancelAll(), model.cancelAll(), 'cancelAll');
        break;
      case 'close': {
        const { outcome, id } = await real.close();
        expectOutcome(outcome, model.judgeClose().outcome, 'close');
        if (id) model.close(id);
        break;
      }
      case 'reset':
        expectOutcome(await real.reset(), model.reset(), 'reset');
        break;
      case 'lock':
        await real.lock();
        model.lock();
        break;
      case 'unlock':
        await real.unlock();
        model.unlock();
        break;
    }
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return this.name;
  }
}

/** The price moves within ±1.5 % of the start: the kill switch's −4 % line and the daily loss bound stay out of reach. */
export class PriceCommand implements Cmd {
  private readonly permille: number;
  private readonly rules: Rules;
  constructor(permille: number, rules: Rules) {
    this.permille = permille;
    this.rules = rules;
  }
  check() {
    return true;
  }
  async run(model: AccountModel, real: Harness) {
    const price = priceAt(START_PRICE, this.permille);
    model.setPrice(price);
    await real.setPrice(price);
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return `price(${this.permille})`;
  }
}

/** Every command, its parameters drawn by fast-check. */
export const commandArbitraries = (rules: Rules) => {
  const placeSpec = fc.record({
    side: fc.constantFrom<TSide>('buy', 'sell'),
    kind: fc.constantFrom<TKind>('market', 'limit', 'stop'),
    // Buys of up to 0.6 BTC (about 54 000 USDT): a few exhaust the buying power and the risk cap;
    // 0.1 to 0.45 BTC, near a single buy's risk cap (about 0.44 BTC at the default stop), is drawn
    // often so that stacked buys meet the per-position rule. Sells: lots / 50 000 of the held quantity.
    lots: fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 10_000, max: 45_000 }), fc.integer({ min: 1, max: 60_000 })),
    permille: fc.integer({ min: -20, max: 20 }),
    bracket: fc.option(fc.record({ tp: fc.integer({ min: 2, max: 20 }), sl: fc.integer({ min: 2, max: 20 }) }), { nil: null }),
    offGrid: rules.tickGrid ? fc.boolean() : fc.constant(false),
  });
  return [
    placeSpec.map((spec) => new PlaceCommand(spec, rules)),
    placeSpec.map((spec) => new PlaceCommand(spec, rules)),
    fc
      .record({ pick: fc.nat(), lots: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: null }), permille: fc.option(fc.integer({ min: -20, max: 20 }), { nil: null }) })
      .map((spec) => new ReplaceCommand(spec, rules)),
    fc.nat().map((pick) => new CancelCommand(pick, rules)),
    fc.integer({ min: -15, max: 15 }).map((permille) => new PriceCommand(permille, rules)),
    fc.integer({ min: -15, max: 15 }).map((permille) => new PriceCommand(permille, rules)),
    fc.constantFrom<SimpleName>('cancelAll', 'close', 'reset', 'lock', 'unlock', 'close').map((name) => new SimpleCommand(name, rules)),
  ];
};
