// The commands of the model-based test: each runs on the model and on the real account, then the
// two are compared (answer, cash, buying power, position, every order's status and fill). A
// command whose answer depends on a rule that is switched off is not run (`check`).
import * as fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import type { AccountModel } from './account-model.ts';
import { D, PARAMS, type BracketTerms, type Judgement, type ModelOrder, type PlaceRequest, type ReplaceRequest, type Rules, type TKind, type TOutcome, type Trail, type TSide } from './model-types.ts';
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

/** A trail: a percent of the mark in basis points (`bp` / 100 %), or a price distance in ticks (cents). */
export type TrailSpec = { bp: number } | { cents: number };

/** The trail a spec asks for; a price trail half a tick off the grid with `offGrid`. */
const trailOf = (spec: TrailSpec, offGrid: boolean): Trail =>
  'bp' in spec ? { percent: new D(spec.bp).dividedBy(100) } : { price: PARAMS.tick.times(spec.cents).plus(offGrid ? PARAMS.tick.dividedBy(2) : 0) };

/**
 * A bracket's legs, in thousandths from the entry's reference: a take-profit above, a stop_loss
 * below, or a trail in place of the stop_loss; `only` makes it an oto with that one leg.
 */
export interface BracketSpec {
  tp: number;
  sl: number;
  trail?: TrailSpec | undefined;
  only?: 'tp' | 'sl' | undefined;
}

export interface PlaceSpec {
  side: TSide;
  kind: TKind;
  lots: number;
  permille: number;
  bracket: BracketSpec | null;
  offGrid: boolean;
  /** A trailing stop's trail (kind `trailing`). */
  trail?: TrailSpec | undefined;
}

/** A sell's size is a share of the held quantity (lots / 50 000 of it, up to 120 %, so some oversell): random sizes would almost never fit. */
const sellQtyOf = (model: AccountModel, lots: number): Decimal => Decimal.max(model.held.times(lots).dividedBy(50_000).toNearest(PARAMS.lot, Decimal.ROUND_DOWN), PARAMS.lot);

/** The request a spec makes against the model's current price (the id comes at run time). */
export const placeRequestOf = (model: AccountModel, spec: PlaceSpec, id = 'probe'): PlaceRequest => {
  const qty = spec.side === 'sell' ? sellQtyOf(model, spec.lots) : PARAMS.lot.times(spec.lots);
  if (spec.kind === 'trailing') return { id, side: spec.side, kind: 'trailing', qty, trail: trailOf(spec.trail ?? { bp: 100 }, spec.offGrid) };
  const at = priceAt(model.price, spec.permille, spec.offGrid);
  const limit = spec.kind === 'limit' ? at : undefined;
  const stop = spec.kind === 'stop' ? at : undefined;
  const reference = limit ?? model.price;
  const legs = spec.bracket && spec.side === 'buy' && spec.kind !== 'stop' ? spec.bracket : null;
  if (!legs) return { id, side: spec.side, kind: spec.kind, qty, limit, stop };
  const bracket: BracketTerms = {
    tp: legs.only === 'sl' ? null : priceAt(reference, legs.tp),
    sl: legs.only === 'tp' || legs.trail ? null : priceAt(reference, -legs.sl),
    trail: legs.only !== 'tp' && legs.trail ? trailOf(legs.trail, spec.offGrid) : null,
  };
  return { id, side: spec.side, kind: spec.kind, qty, limit, stop, bracket, cls: legs.only ? 'oto' : undefined };
};

/**
 * An oco on the held position: a sell limit `tp` thousandths from the price (below it: marketable)
 * and its stop leg, a stop_loss `sl` thousandths below the price (at or above it: refused) or a
 * trail from the price.
 */
export interface OcoSpec {
  lots: number;
  tp: number;
  sl: number;
  trail?: TrailSpec | undefined;
  offGrid: boolean;
}

export const ocoRequestOf = (model: AccountModel, spec: OcoSpec, id = 'probe'): PlaceRequest => ({
  id,
  side: 'sell',
  kind: 'limit',
  qty: sellQtyOf(model, spec.lots),
  limit: priceAt(model.price, spec.tp, spec.offGrid),
  bracket: { tp: null, sl: spec.trail ? null : priceAt(model.price, -spec.sl), trail: spec.trail ? trailOf(spec.trail, spec.offGrid) : null },
  cls: 'oco',
});

/** A placement of any kind: its request is made from its spec against the model's price at run time. */
abstract class PlacingCommand<S> implements Cmd {
  protected readonly spec: S;
  protected readonly rules: Rules;
  constructor(spec: S, rules: Rules) {
    this.spec = spec;
    this.rules = rules;
  }
  protected abstract requestOf(model: AccountModel, id?: string): PlaceRequest;
  protected abstract readonly name: string;
  /** Whether the command is worth running now: an exit of nothing held only repeats a plain sell's refusal. */
  protected useful(_model: Readonly<AccountModel>): boolean {
    return true;
  }
  check(model: Readonly<AccountModel>) {
    return this.useful(model) && allowed((model as AccountModel).judgePlace(this.requestOf(model as AccountModel)), this.rules);
  }
  async run(model: AccountModel, real: Harness) {
    const request = this.requestOf(model, real.nextId());
    const expected = model.place(request);
    expectOutcome(await real.place(request), expected, this.toString());
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return `${this.name}(${JSON.stringify(this.spec)})`;
  }
}

/** A market, limit, stop or trailing stop order; a buy's bracket (or oto). */
export class PlaceCommand extends PlacingCommand<PlaceSpec> {
  protected readonly name = 'place';
  protected requestOf(model: AccountModel, id?: string) {
    return placeRequestOf(model, this.spec, id);
  }
  protected override useful(model: Readonly<AccountModel>) {
    return !(this.spec.kind === 'trailing' && this.spec.side === 'sell' && model.held.isZero());
  }
}

/** An oco sell on the held position. */
export class OcoCommand extends PlacingCommand<OcoSpec> {
  protected readonly name = 'oco';
  protected requestOf(model: AccountModel, id?: string) {
    return ocoRequestOf(model, this.spec, id);
  }
  protected override useful(model: Readonly<AccountModel>) {
    return !model.held.isZero();
  }
}

export interface ReplaceSpec {
  pick: number;
  lots: number | null;
  permille: number | null;
}

/** The plain (not bracket, oto or oco) limit and stop orders a replace may pick from, finished ones included. */
const replaceable = (model: AccountModel): ModelOrder[] => model.orders.filter((order) => (order.kind === 'limit' || order.kind === 'stop') && !order.bracket && !order.leg && !order.cls);

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

export interface TrailReplaceSpec {
  pick: number;
  trail: TrailSpec;
  /** A new size as a placement's (a sell's a share of the held quantity); never for a leg, whose size follows its pair. */
  lots: number | null;
  offGrid: boolean;
}

/** The trailing stops (legs too) a new trail may go to, finished ones included. */
const trailing = (model: AccountModel): ModelOrder[] => model.orders.filter((order) => order.kind === 'trailing');

export const trailReplaceRequestOf = (model: AccountModel, spec: TrailReplaceSpec): ReplaceRequest | undefined => {
  const candidates = trailing(model);
  const order = candidates[spec.pick % Math.max(candidates.length, 1)];
  if (!order) return undefined;
  const qty = spec.lots === null || order.leg ? undefined : order.side === 'sell' ? sellQtyOf(model, spec.lots) : PARAMS.lot.times(spec.lots);
  return { id: order.id, qty, trail: trailOf(spec.trail, spec.offGrid) };
};

/** A trailing stop's new trail (and maybe size): its stop set again from its mark. */
export class TrailReplaceCommand implements Cmd {
  private readonly spec: TrailReplaceSpec;
  private readonly rules: Rules;
  constructor(spec: TrailReplaceSpec, rules: Rules) {
    this.spec = spec;
    this.rules = rules;
  }
  check(model: Readonly<AccountModel>) {
    const change = trailReplaceRequestOf(model as AccountModel, this.spec);
    return change !== undefined && allowed((model as AccountModel).judgeReplace(change), this.rules);
  }
  async run(model: AccountModel, real: Harness) {
    const change = trailReplaceRequestOf(model, this.spec)!;
    const expected = model.replace(change);
    expectOutcome(await real.replace(change), expected, this.toString());
    await compareAfter(model, real, this.rules);
  }
  toString() {
    return `retrail(${JSON.stringify(this.spec)})`;
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

/** Mostly absent, sometimes drawn. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, weight: number) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary, weight });

/** Every command, its parameters drawn by fast-check. */
export const commandArbitraries = (rules: Rules) => {
  // Buys of up to 0.6 BTC (about 54 000 USDT): a few exhaust the buying power and the risk cap;
  // 0.1 to 0.45 BTC, near a single buy's risk cap (about 0.44 BTC at the default stop), is drawn
  // often so that stacked buys meet the per-position rule. Sells: lots / 50 000 of the held quantity.
  const lots = fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 10_000, max: 45_000 }), fc.integer({ min: 1, max: 60_000 }));
  const offGrid = rules.tickGrid ? fc.boolean() : fc.constant(false);
  // The advanced orders' prices are off the grid less often: their refusals are the same check.
  const rarelyOffGrid = rules.tickGrid ? fc.oneof({ arbitrary: fc.constant(false), weight: 5 }, { arbitrary: fc.constant(true), weight: 1 }) : fc.constant(false);
  // Trails from 0.05 % to 3 % or 5 to 2 700 USDT (about the same at 90 000): the price moves within
  // ±1.5 % of the start, so wide trails wait and narrow ones trigger.
  const trail: fc.Arbitrary<TrailSpec> = fc.oneof(fc.integer({ min: 5, max: 300 }).map((bp) => ({ bp })), fc.integer({ min: 500, max: 270_000 }).map((cents) => ({ cents })));
  const placeSpec = fc.record({
    side: fc.constantFrom<TSide>('buy', 'sell'),
    kind: fc.constantFrom<TKind>('market', 'limit', 'stop'),
    lots,
    permille: fc.integer({ min: -20, max: 20 }),
    bracket: fc.option(
      fc.record({
        tp: fc.integer({ min: 2, max: 20 }),
        sl: fc.integer({ min: 2, max: 20 }),
        trail: rules.trailingLegs ? sometimes(trail, 2) : fc.constant(undefined),
        only: rules.otoOrders ? sometimes(fc.constantFrom<'tp' | 'sl'>('tp', 'sl'), 1) : fc.constant(undefined),
      }),
      { nil: null },
    ),
    offGrid,
  });
  const trailingSpec = (side: TSide): fc.Arbitrary<PlaceSpec> =>
    fc.record({ side: fc.constant(side), kind: fc.constant<TKind>('trailing'), lots, permille: fc.constant(0), bracket: fc.constant(null), offGrid: rarelyOffGrid, trail });
  const ocoSpec: fc.Arbitrary<OcoSpec> = fc.record({
    lots: fc.integer({ min: 1, max: 60_000 }),
    tp: fc.integer({ min: -5, max: 20 }),
    sl: fc.integer({ min: -3, max: 20 }),
    trail: sometimes(trail, 2),
    offGrid: rarelyOffGrid,
  });
  const optional: fc.Arbitrary<Cmd>[] = [];
  if (rules.trailingStops) optional.push(...(['buy', 'sell'] as const).map((side) => trailingSpec(side).map((spec) => new PlaceCommand(spec, rules))));
  if (rules.ocoOrders) optional.push(ocoSpec.map((spec) => new OcoCommand(spec, rules)));
  if (rules.trailReplace) {
    optional.push(fc.record({ pick: fc.nat(), trail, lots: fc.option(lots, { nil: null }), offGrid: rarelyOffGrid }).map((spec) => new TrailReplaceCommand(spec, rules)));
  }
  // A market buy of up to 0.2 BTC, within the risk cap: a position for the exits to work on.
  const holding = fc.record({ side: fc.constant<TSide>('buy'), kind: fc.constant<TKind>('market'), lots: fc.integer({ min: 1, max: 20_000 }), permille: fc.constant(0), bracket: fc.constant(null), offGrid: fc.constant(false) });
  return [
    placeSpec.map((spec) => new PlaceCommand(spec, rules)),
    placeSpec.map((spec) => new PlaceCommand(spec, rules)),
    holding.map((spec) => new PlaceCommand(spec, rules)),
    ...optional,
    fc
      .record({ pick: fc.nat(), lots: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: null }), permille: fc.option(fc.integer({ min: -20, max: 20 }), { nil: null }) })
      .map((spec) => new ReplaceCommand(spec, rules)),
    fc.nat().map((pick) => new CancelCommand(pick, rules)),
    fc.integer({ min: -15, max: 15 }).map((permille) => new PriceCommand(permille, rules)),
    fc.integer({ min: -15, max: 15 }).map((permille) => new PriceCommand(permille, rules)),
    fc.integer({ min: -15, max: 15 }).map((permille) => new PriceCommand(permille, rules)),
    fc.constantFrom<SimpleName>('cancelAll', 'close', 'reset', 'lock', 'unlock', 'close').map((name) => new SimpleCommand(name, rules)),
  ];
};
