// An independent model of ONE simulated paper crypto account, written from DESIGN §6 ("Order
// gates", "Order semantics", "Rules a real broker enforces", "Advanced orders", "Kill switch",
// "Simulated broker"), not from the service's code: it imports nothing from server/. The model-based test
// (account.model.test.ts) drives the real service and this model with the same commands and
// compares them after each one. Every number is a decimal (decimal.js at 40 digits, as money is
// everywhere in the service), never a float sum.
import { Decimal } from 'decimal.js';
import { D, PARAMS, type BracketTerms, type Judgement, type ModelOrder, type PlaceRequest, type ReplaceRequest, type TKind, type TOutcome, type Trail, type TRule, type TSide } from './model-types.ts';

const ZERO = new D(0);
const ONE = new D(1);

const refused = (code: string): TOutcome => ({ ok: false, code });
const OK: TOutcome = { ok: true };

export class AccountModel {
  cash = PARAMS.initialCash;
  price: Decimal;
  held = ZERO;
  avg = ZERO;
  locked = false;
  orders: ModelOrder[] = [];

  constructor(price: Decimal) {
    this.price = price;
  }

  // --- arithmetic of fills (the simulator's rules, in our own words) ---

  /** Slipped against the taker, onto the grid away from the taker, never beyond a limit. */
  execPrice(side: TSide, reference: Decimal, limit: Decimal | null): Decimal {
    const factor = side === 'buy' ? ONE.plus(PARAMS.slippage) : ONE.minus(PARAMS.slippage);
    let price = reference.times(factor).toNearest(PARAMS.tick, side === 'buy' ? Decimal.ROUND_CEIL : Decimal.ROUND_FLOOR);
    if (limit && side === 'buy' && price.gt(limit)) price = limit;
    if (limit && side === 'sell' && price.lt(limit)) price = limit;
    return price;
  }

  /** What a buy of qty at that price costs, fee included. */
  buyCost(qty: Decimal, price: Decimal): Decimal {
    return qty.times(price).times(ONE.plus(PARAMS.commission));
  }

  // --- trailing stops (DESIGN §6 "Advanced orders") ---

  /** Where a trail puts the stop from its mark: a sell's below it, onto the grid downwards; a buy's above it, upwards (never tighter than asked). */
  trailStop(side: TSide, mark: Decimal, trail: Trail): Decimal {
    const distance = 'percent' in trail ? mark.times(trail.percent).dividedBy(100) : trail.price;
    const stop = side === 'sell' ? mark.minus(distance) : mark.plus(distance);
    return stop.lte(0) ? ZERO : stop.toNearest(PARAMS.tick, side === 'sell' ? Decimal.ROUND_FLOOR : Decimal.ROUND_CEIL);
  }

  /** A trailing stop leg's first stop below an entry, as sizing judges it (exact, off the grid). */
  trailedBelow(entry: Decimal, trail: Trail): Decimal {
    return 'percent' in trail ? entry.times(new D(100).minus(trail.percent)).dividedBy(100) : entry.minus(trail.price);
  }

  /** A bracket's protective stop for an entry: its stop_loss, or its trail from the entry; none (an oto's take-profit alone). */
  protectiveStop(bracket: BracketTerms | null, entry: Decimal): Decimal | null {
    if (!bracket) return null;
    if (bracket.sl) return bracket.sl;
    return bracket.trail ? this.trailedBelow(entry, bracket.trail) : null;
  }

  /**
   * A new high (sell) or low (buy) is the new mark, and moves the stop to its trail from it where
   * that is tighter; the stop never loosens with the price. (The model's prices move by 90 USDT or
   * so, so a new mark always tightens the stop: whether a mark the grid leaves the stop at is kept
   * is not observed here.)
   */
  private follow(order: ModelOrder): void {
    const beyond = order.side === 'sell' ? this.price.gt(order.hwm!) : this.price.lt(order.hwm!);
    if (!beyond) return;
    order.hwm = this.price;
    const stop = this.trailStop(order.side, this.price, order.trail!);
    if (order.side === 'sell' ? stop.gt(order.stop!) : stop.lt(order.stop!)) order.stop = stop;
  }

  find(id: string): ModelOrder | undefined {
    return this.orders.find((order) => order.id === id);
  }

  working(): ModelOrder[] {
    return this.orders.filter((order) => order.status === 'working');
  }

  remaining(order: ModelOrder): Decimal {
    return order.qty.minus(order.filledQty);
  }

  /** A working buy's reserve price: its limit, or its stop (a trailing stop's current one; market orders never stay working here). */
  reservePrice(order: ModelOrder): Decimal {
    return order.kind === 'limit' ? order.limit! : order.stop!;
  }

  reserved(except?: string): Decimal {
    return this.working()
      .filter((order) => order.side === 'buy' && order.id !== except)
      .reduce((sum, order) => sum.plus(this.buyCost(this.remaining(order), this.reservePrice(order))), ZERO);
  }

  buyingPower(except?: string): Decimal {
    return this.cash.minus(this.reserved(except));
  }

  /**
   * Held less what working sells still sell; an OCO pair counts once (`pairOnce`). A replace
   * releases its order's own hold (`except`); a leg's own hold is its pair's, so the pair's other
   * leg is released with it (`pairReleased`), as the two will again sell the same units.
   */
  available(except?: string, pairOnce = true, pairReleased = true): Decimal {
    const released = new Set([except, pairReleased && except ? this.find(except)?.sibling : undefined]);
    const sells = this.working().filter((order) => order.side === 'sell' && !released.has(order.id));
    const workingIds = new Set(sells.map((order) => order.id));
    const promised = sells
      .filter((order) => !(pairOnce && order.leg === 'sl' && order.sibling !== undefined && workingIds.has(order.sibling)))
      .reduce((sum, order) => sum.plus(this.remaining(order)), ZERO);
    return this.held.minus(promised);
  }

  equity(): Decimal {
    return this.cash.plus(this.held.times(this.price));
  }

  hasWorkingBuy(except?: string): boolean {
    return this.working().some((order) => order.side === 'buy' && order.id !== except);
  }

  // --- sizing ---

  /** Where a buy is expected to enter: the simulator's price for it now (a resting limit's limit, a stop's trigger or the market above it). */
  entryOf(kind: TKind, limit: Decimal | null, stop: Decimal | null): Decimal {
    const reference = kind === 'stop' || kind === 'trailing' ? Decimal.max(stop!, this.price) : this.price;
    return this.execPrice('buy', reference, kind === 'limit' ? limit : null);
  }

  defaultStop(price: Decimal): Decimal {
    return price.times(ONE.minus(PARAMS.defaultStopPct.dividedBy(100)));
  }

  cap(): Decimal {
    return this.equity().times(PARAMS.maxRiskPct).dividedBy(100);
  }

  /** DESIGN's per-position risk: held quantity at the current price against its protective stops, every working buy at its entry against its bracket stop, and the new buy. */
  positionRisk(newBuy: { qty: Decimal; entry: Decimal; sl: Decimal | null } | null, except?: string): Decimal {
    const stops = this.working().filter((order) => order.side === 'sell' && (order.kind === 'stop' || order.kind === 'trailing') && order.id !== except);
    let covered = ZERO;
    let risk = ZERO;
    for (const stop of stops) {
      const qty = Decimal.min(this.remaining(stop), Decimal.max(this.held.minus(covered), 0));
      covered = covered.plus(qty);
      risk = risk.plus(qty.times(Decimal.max(this.price.minus(stop.stop!), 0)));
    }
    risk = risk.plus(Decimal.max(this.held.minus(covered), 0).times(this.price.minus(this.defaultStop(this.price))));
    const buys = this.working().filter((order) => order.side === 'buy' && order.id !== except);
    const legs = buys.map((order) => {
      const entry = this.reservePrice(order);
      return { qty: this.remaining(order), entry, sl: this.protectiveStop(order.bracket, entry) };
    });
    if (newBuy) legs.push(newBuy);
    for (const leg of legs) risk = risk.plus(this.legRisk(leg));
    return risk;
  }

  /** A buy's risk: against its bracket's stop leg, at least nothing (a stop at or above the entry sells at once), else (no stop leg) the default stop. */
  legRisk(leg: { qty: Decimal; entry: Decimal; sl: Decimal | null }): Decimal {
    return leg.sl ? leg.qty.times(Decimal.max(leg.entry.minus(leg.sl), 0)) : leg.qty.times(leg.entry.minus(this.defaultStop(leg.entry)));
  }

  /** The per-order rule the service had before DESIGN's per-position one: this order alone. */
  orderRisk(buy: { qty: Decimal; entry: Decimal; sl: Decimal | null }): Decimal {
    return this.legRisk(buy);
  }

  // --- gates, in DESIGN's order; each answers the first refusal ---

  private offGrid(...prices: (Decimal | null | undefined)[]): boolean {
    return prices.some((price) => price && !price.mod(PARAMS.tick).isZero());
  }

  /** Would a stop trigger on arrival (a buy stop at or below the price, a sell stop at or above it)? */
  triggersAtOnce(side: TSide, stop: Decimal): boolean {
    return side === 'buy' ? stop.lte(this.price) : stop.gte(this.price);
  }

  /**
   * The risk gate's checks for an order of these terms (a replace passes `except`, its own
   * order, whose reservation and promise are released).
   */
  private riskGate(terms: { side: TSide; kind: TKind; qty: Decimal; limit: Decimal | null; stop: Decimal | null; bracket: BracketTerms | null; prices: (Decimal | null | undefined)[] }, blockers: Set<TRule>, except?: string): TOutcome | undefined {
    const { side, kind, qty, limit, stop } = terms;
    if (this.locked) {
      if (side === 'buy') return refused('RISK_RULE_VIOLATION');
      blockers.add('lockExits');
    }
    if (this.offGrid(...terms.prices)) {
      blockers.add('tickGrid');
      return refused('RISK_RULE_VIOLATION');
    }
    if (side === 'sell') {
      const fits = qty.lte(this.available(except));
      if (fits !== qty.lte(this.available(except, false))) blockers.add('ocoAvailability');
      if (except && fits !== qty.lte(this.available(except, true, false))) blockers.add('pairLegReplace');
      return fits ? undefined : refused('INSUFFICIENT_FUNDS');
    }
    const entry = this.entryOf(kind, limit, stop);
    if (this.hasWorkingBuy(except)) blockers.add('reservation');
    if (this.buyCost(qty, entry).gt(this.buyingPower(except))) return refused('INSUFFICIENT_FUNDS');
    const buy = { qty, entry, sl: this.protectiveStop(terms.bracket, entry) };
    // Sizing refuses only what adds risk: a buy that adds none passes even a position over the cap (as fees can leave one).
    const withinCap = this.legRisk(buy).lte(0) || this.positionRisk(buy, except).lte(this.cap());
    if (withinCap !== this.orderRisk(buy).lte(this.cap())) blockers.add('positionSizing');
    return withinCap ? undefined : refused('RISK_RULE_VIOLATION');
  }

  /** The trail's price distance, which must sit on the grid (a percent need not). */
  private trailPrice(trail: Trail | null | undefined): Decimal | null {
    return trail && 'price' in trail ? trail.price : null;
  }

  judgePlace(request: PlaceRequest): Judgement {
    const blockers = new Set<TRule>();
    const { side, kind, qty } = request;
    const limit = request.limit ?? null;
    const bracket = request.bracket ?? null;
    if (kind === 'trailing') blockers.add('trailingStops');
    if (bracket?.trail && request.cls !== 'oco') blockers.add('trailingLegs');
    if (request.cls === 'oco') blockers.add('ocoOrders');
    if (request.cls === 'oto') blockers.add('otoOrders');
    // A trailing stop is judged as the stop its trail starts at from the price.
    const stop = kind === 'trailing' ? this.trailStop(side, this.price, request.trail!) : (request.stop ?? null);
    const prices = [limit, request.stop, bracket?.tp, bracket?.sl, this.trailPrice(request.trail), this.trailPrice(bracket?.trail)];
    // An oco's legs are exits: its bracket is no entry's protection.
    const gate = this.riskGate({ side, kind, qty, limit, stop, bracket: request.cls === 'oco' ? null : bracket, prices }, blockers);
    if (gate) return { outcome: gate, blockers: [...blockers] };
    if (kind === 'stop' && this.triggersAtOnce(side, stop!)) {
      blockers.add('stopTriggerReject');
      return { outcome: refused('BROKER_REJECTED'), blockers: [...blockers] };
    }
    // An oco's stop_loss sits below its limit and below the price (else it would trigger at once).
    if (request.cls === 'oco' && bracket?.sl && !(bracket.sl.lt(limit!) && bracket.sl.lt(this.price))) return { outcome: refused('BROKER_REJECTED'), blockers: [...blockers] };
    return { outcome: OK, blockers: [...blockers] };
  }

  /** Places the order as judged: a broker refusal leaves a rejected order; an accepted one meets the price at once. */
  place(request: PlaceRequest): TOutcome {
    const { outcome } = this.judgePlace(request);
    const oco = request.cls === 'oco';
    const order: ModelOrder = {
      id: request.id,
      side: request.side,
      kind: request.kind,
      qty: request.qty,
      limit: request.limit ?? null,
      stop: request.stop ?? null,
      bracket: (!oco && request.bracket) || null,
      status: 'working',
      filledQty: ZERO,
      ...(request.cls && { cls: request.cls }),
      ...(request.kind === 'trailing' && { trail: request.trail!, hwm: this.price, stop: this.trailStop(request.side, this.price, request.trail!) }),
    };
    if (!outcome.ok) {
      if (outcome.code === 'BROKER_REJECTED') this.orders.push({ ...order, status: 'rejected' });
      return outcome;
    }
    this.orders.push(order);
    // An oco's stop leg works beside its limit from the start, a trailing one marked at the price; the limit then meets the price.
    if (oco) {
      order.sibling = `${order.id}:sl`;
      this.orders.push(this.stopLeg(order, request.bracket!, this.price, order.id));
    }
    this.match(order, true);
    return OK;
  }

  judgeReplace(change: ReplaceRequest): Judgement {
    const blockers = new Set<TRule>();
    const order = this.find(change.id);
    if (!order) return { outcome: refused('ORDER_NOT_FOUND'), blockers: [] };
    if (order.status !== 'working') return { outcome: refused('ORDER_NOT_CANCELABLE'), blockers: [] };
    const qty = change.qty ?? order.qty;
    const limit = order.kind === 'limit' ? (change.limit ?? order.limit) : null;
    const trailing = order.kind === 'trailing';
    if (change.trail) blockers.add('trailReplace');
    // The gates judge a trailing stop as the stop its (new) trail starts at from the price.
    const stop = trailing ? this.trailStop(order.side, this.price, change.trail ?? order.trail!) : order.kind === 'stop' ? (change.stop ?? order.stop) : null;
    const gate = this.riskGate({ side: order.side, kind: order.kind, qty, limit, stop, bracket: null, prices: [change.limit, change.stop, this.trailPrice(change.trail)] }, blockers, order.id);
    if (gate) {
      blockers.add('replaceGates');
      return { outcome: gate, blockers: [...blockers] };
    }
    if (order.kind === 'stop' && this.triggersAtOnce(order.side, stop!)) {
      blockers.add('stopTriggerReject');
      return { outcome: refused('BROKER_REJECTED'), blockers: [...blockers] };
    }
    if (trailing) {
      // The broker sets the stop again from the order's mark, not the price.
      const newStop = this.retrailedStop(order, change);
      if (this.triggersAtOnce(order.side, newStop)) return { outcome: refused('BROKER_REJECTED'), blockers: [...blockers] };
      // The broker's own funds check of a buy whose worst cost rises, its reservation released.
      if (order.side === 'buy') {
        const after = this.buyCost(qty, this.entryOf('trailing', null, newStop));
        const before = this.buyCost(order.qty, this.entryOf('trailing', null, order.stop));
        if (after.gt(before) && after.gt(this.buyingPower(order.id))) return { outcome: refused('INSUFFICIENT_FUNDS'), blockers: [...blockers] };
      }
    }
    return { outcome: OK, blockers: [...blockers] };
  }

  /** A trailing stop's stop after a replace: from its mark with the new trail, or as it is. */
  private retrailedStop(order: ModelOrder, change: ReplaceRequest): Decimal {
    return change.trail ? this.trailStop(order.side, order.hwm!, change.trail) : order.stop!;
  }

  /** A refused replace leaves the order as it was; an accepted one changes it in place and meets the price at once. */
  replace(change: ReplaceRequest): TOutcome {
    const { outcome } = this.judgeReplace(change);
    if (!outcome.ok) return outcome;
    const order = this.find(change.id)!;
    if (order.kind === 'trailing' && change.trail) {
      order.stop = this.retrailedStop(order, change);
      order.trail = change.trail;
    }
    if (change.qty) order.qty = change.qty;
    if (order.kind === 'limit' && change.limit) order.limit = change.limit;
    if (order.kind === 'stop' && change.stop) order.stop = change.stop;
    this.match(order, false);
    return OK;
  }

  cancel(id: string): TOutcome {
    const order = this.find(id);
    if (!order) return refused('ORDER_NOT_FOUND');
    if (order.status !== 'working') return refused('ORDER_NOT_CANCELABLE');
    this.end(order, 'canceled', true);
    return OK;
  }

  cancelAll(): TOutcome {
    for (const order of this.working()) order.status = 'canceled';
    return OK;
  }

  judgeClose(): Judgement {
    const blockers = new Set<TRule>();
    if (this.held.isZero()) return { outcome: refused('NOT_FOUND'), blockers: [] };
    if (this.locked) blockers.add('lockExits');
    if (this.working().some((order) => order.side === 'sell')) blockers.add('closeCancelsSells');
    return { outcome: OK, blockers: [...blockers] };
  }

  /** Cancels the working sells, then sells the whole held quantity at market as order `id`. */
  close(id: string): TOutcome {
    const { outcome } = this.judgeClose();
    if (!outcome.ok) return outcome;
    for (const order of this.working()) if (order.side === 'sell') order.status = 'canceled';
    const sell: ModelOrder = { id, side: 'sell', kind: 'market', qty: this.held, limit: null, stop: null, bracket: null, status: 'working', filledQty: ZERO };
    this.orders.push(sell);
    this.match(sell, true);
    return OK;
  }

  reset(): TOutcome {
    if (this.locked) return refused('RISK_RULE_VIOLATION');
    for (const order of this.working()) order.status = 'canceled';
    this.cash = PARAMS.initialCash;
    this.held = ZERO;
    this.avg = ZERO;
    return OK;
  }

  judgeLock(): Judgement {
    const plainSell = this.working().some((order) => order.side === 'sell' && !order.leg);
    return { outcome: OK, blockers: plainSell ? ['lockKeepsSells'] : [] };
  }

  /** The kill switch's lock (as the sweep applies it): buys canceled, sells kept. */
  lock(): void {
    this.locked = true;
    for (const order of this.working()) if (order.side === 'buy') order.status = 'canceled';
  }

  unlock(): void {
    this.locked = false;
  }

  /** A new price: every order working before it meets it, oldest first; children made meanwhile wait for the next. */
  setPrice(price: Decimal): void {
    this.price = price;
    for (const order of this.working()) if (order.status === 'working') this.match(order, false);
  }

  // --- matching ---

  /** Where this price reaches the order, or undefined while it rests (a trailing stop as the stop it is now). */
  private reach(order: ModelOrder): Decimal | undefined {
    const price = this.price;
    if (order.kind === 'market') return price;
    if (order.kind === 'limit') return (order.side === 'buy' ? price.lte(order.limit!) : price.gte(order.limit!)) ? price : undefined;
    return (order.side === 'buy' ? price.gte(order.stop!) : price.lte(order.stop!)) ? price : undefined;
  }

  /** One observation of the current price: a trailing stop follows it first; then fill in full, or a refusal by the broker (rejected on arrival, canceled later). */
  private match(order: ModelOrder, arriving: boolean): void {
    if (order.kind === 'trailing') this.follow(order);
    const reference = this.reach(order);
    if (!reference) return;
    const qty = this.remaining(order);
    const price = this.execPrice(order.side, reference, order.kind === 'limit' ? order.limit : null);
    const notional = qty.times(price);
    const fee = notional.times(PARAMS.commission);
    if (order.side === 'buy' && this.cash.minus(notional).minus(fee).lt(0)) return this.end(order, arriving ? 'rejected' : 'canceled', true);
    if (order.side === 'sell' && this.held.lt(qty)) return this.end(order, arriving ? 'rejected' : 'canceled', true);
    if (order.side === 'buy') {
      const newHeld = this.held.plus(qty);
      this.avg = this.held.times(this.avg).plus(notional).dividedBy(newHeld);
      this.held = newHeld;
      this.cash = this.cash.minus(notional).minus(fee);
    } else {
      this.held = this.held.minus(qty);
      if (this.held.isZero()) this.avg = ZERO;
      this.cash = this.cash.plus(notional).minus(fee);
    }
    order.filledQty = order.qty;
    order.status = 'filled';
    if (order.sibling) {
      const sibling = this.find(order.sibling);
      if (sibling?.status === 'working') sibling.status = 'canceled';
    }
    if (order.bracket) this.protect(order, price);
  }

  /**
   * A filled bracket entry becomes an OCO pair of a take-profit limit and a stop leg (a stop, or a
   * trailing stop marked at the entry's fill price); an oto's one leg works alone.
   */
  private protect(entry: ModelOrder, fillPrice: Decimal): void {
    const { tp, sl, trail } = entry.bracket!;
    const pair = tp !== null && (sl !== null || trail !== null);
    if (tp) {
      this.orders.push({
        id: `${entry.id}:tp`,
        side: 'sell',
        kind: 'limit',
        qty: entry.filledQty,
        limit: tp,
        stop: null,
        bracket: null,
        status: 'working',
        filledQty: ZERO,
        leg: 'tp',
        ...(pair && { sibling: `${entry.id}:sl` }),
      });
    }
    if (sl || trail) this.orders.push(this.stopLeg(entry, entry.bracket!, fillPrice, pair ? `${entry.id}:tp` : undefined));
  }

  /** The sell stop leg `${parent.id}:sl` for the parent's filled (an oco: its whole) quantity: a stop at the stop_loss, or a trailing stop marked at `mark`. */
  private stopLeg(parent: ModelOrder, bracket: BracketTerms, mark: Decimal, sibling: string | undefined): ModelOrder {
    const qty = parent.cls === 'oco' ? parent.qty : parent.filledQty;
    const common = { id: `${parent.id}:sl`, side: 'sell' as const, qty, limit: null, bracket: null, status: 'working' as const, filledQty: ZERO, leg: 'sl' as const, ...(sibling && { sibling }) };
    if (bracket.trail) return { ...common, kind: 'trailing', stop: this.trailStop('sell', mark, bracket.trail), trail: bracket.trail, hwm: mark };
    return { ...common, kind: 'stop', stop: bracket.sl };
  }

  private end(order: ModelOrder, status: 'canceled' | 'rejected', withSibling: boolean): void {
    order.status = status;
    if (withSibling && order.sibling) {
      const sibling = this.find(order.sibling);
      if (sibling?.status === 'working') sibling.status = 'canceled';
    }
  }
}
