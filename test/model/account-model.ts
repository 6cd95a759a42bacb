// An independent model of ONE simulated paper crypto account, written from DESIGN §6 ("Order
// gates", "Order semantics", "Rules a real broker enforces", "Kill switch", "Simulated broker"),
// not from the service's code: it imports nothing from server/. The model-based test
// (account.model.test.ts) drives the real service and this model with the same commands and
// compares them after each one. Every number is a decimal (decimal.js at 40 digits, as money is
// everywhere in the service), never a float sum.
import { Decimal } from 'decimal.js';
import { D, PARAMS, type Judgement, type ModelOrder, type PlaceRequest, type ReplaceRequest, type TKind, type TOutcome, type TRule, type TSide } from './model-types.ts';

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

  find(id: string): ModelOrder | undefined {
    return this.orders.find((order) => order.id === id);
  }

  working(): ModelOrder[] {
    return this.orders.filter((order) => order.status === 'working');
  }

  remaining(order: ModelOrder): Decimal {
    return order.qty.minus(order.filledQty);
  }

  /** A working buy's reserve price: its limit, or its stop (market orders never stay working here). */
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

  /** Held less what working sells still sell; an OCO pair counts once (`pairOnce`). */
  available(except?: string, pairOnce = true): Decimal {
    const sells = this.working().filter((order) => order.side === 'sell' && order.id !== except);
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
    const reference = kind === 'stop' ? Decimal.max(stop!, this.price) : this.price;
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
    const stops = this.working().filter((order) => order.side === 'sell' && order.kind === 'stop' && order.id !== except);
    let covered = ZERO;
    let risk = ZERO;
    for (const stop of stops) {
      const qty = Decimal.min(this.remaining(stop), Decimal.max(this.held.minus(covered), 0));
      covered = covered.plus(qty);
      risk = risk.plus(qty.times(Decimal.max(this.price.minus(stop.stop!), 0)));
    }
    risk = risk.plus(Decimal.max(this.held.minus(covered), 0).times(this.price.minus(this.defaultStop(this.price))));
    const buys = this.working().filter((order) => order.side === 'buy' && order.id !== except);
    const legs = buys.map((order) => ({ qty: this.remaining(order), entry: this.reservePrice(order), sl: order.bracket?.sl ?? null }));
    if (newBuy) legs.push(newBuy);
    for (const leg of legs) risk = risk.plus(this.legRisk(leg));
    return risk;
  }

  /** A buy's risk: against its bracket's stop leg, at least nothing (a stop at or above the entry sells at once), else the default stop. */
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
  private riskGate(terms: { side: TSide; kind: TKind; qty: Decimal; limit: Decimal | null; stop: Decimal | null; sl: Decimal | null; prices: (Decimal | null)[] }, blockers: Set<TRule>, except?: string): TOutcome | undefined {
    const { side, kind, qty, limit, stop, sl } = terms;
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
      return fits ? undefined : refused('INSUFFICIENT_FUNDS');
    }
    const entry = this.entryOf(kind, limit, stop);
    if (this.hasWorkingBuy(except)) blockers.add('reservation');
    if (this.buyCost(qty, entry).gt(this.buyingPower(except))) return refused('INSUFFICIENT_FUNDS');
    const buy = { qty, entry, sl };
    const withinCap = this.positionRisk(buy, except).lte(this.cap());
    if (withinCap !== this.orderRisk(buy).lte(this.cap())) blockers.add('positionSizing');
    return withinCap ? undefined : refused('RISK_RULE_VIOLATION');
  }

  judgePlace(request: PlaceRequest): Judgement {
    const blockers = new Set<TRule>();
    const { side, kind, qty } = request;
    const limit = request.limit ?? null;
    const stop = request.stop ?? null;
    const bracket = request.bracket ?? null;
    const gate = this.riskGate({ side, kind, qty, limit, stop, sl: bracket?.sl ?? null, prices: [limit, stop, bracket?.tp ?? null, bracket?.sl ?? null] }, blockers);
    if (gate) return { outcome: gate, blockers: [...blockers] };
    if (kind === 'stop' && this.triggersAtOnce(side, stop!)) {
      blockers.add('stopTriggerReject');
      return { outcome: refused('BROKER_REJECTED'), blockers: [...blockers] };
    }
    return { outcome: OK, blockers: [...blockers] };
  }

  /** Places the order as judged: a broker refusal leaves a rejected order; an accepted one meets the price at once. */
  place(request: PlaceRequest): TOutcome {
    const { outcome } = this.judgePlace(request);
    const order: ModelOrder = {
      id: request.id,
      side: request.side,
      kind: request.kind,
      qty: request.qty,
      limit: request.limit ?? null,
      stop: request.stop ?? null,
      bracket: request.bracket ?? null,
      status: 'working',
      filledQty: ZERO,
    };
    if (!outcome.ok) {
      if (outcome.code === 'BROKER_REJECTED') this.orders.push({ ...order, status: 'rejected' });
      return outcome;
    }
    this.orders.push(order);
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
    const stop = order.kind === 'stop' ? (change.stop ?? order.stop) : null;
    const gate = this.riskGate({ side: order.side, kind: order.kind, qty, limit, stop, sl: null, prices: [change.limit ?? null, change.stop ?? null] }, blockers, order.id);
    if (gate) {
      blockers.add('replaceGates');
      return { outcome: gate, blockers: [...blockers] };
    }
    if (order.kind === 'stop' && this.triggersAtOnce(order.side, stop!)) {
      blockers.add('stopTriggerReject');
      return { outcome: refused('BROKER_REJECTED'), blockers: [...blockers] };
    }
    return { outcome: OK, blockers: [...blockers] };
  }

  /** A refused replace leaves the order as it was; an accepted one changes it in place and meets the price at once. */
  replace(change: ReplaceRequest): TOutcome {
    const { outcome } = this.judgeReplace(change);
    if (!outcome.ok) return outcome;
    const order = this.find(change.id)!;
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

  /** Where this price reaches the order, or undefined while it rests. */
  private reach(order: ModelOrder): Decimal | undefined {
    const price = this.price;
    if (order.kind === 'market') return price;
    if (order.kind === 'limit') return (order.side === 'buy' ? price.lte(order.limit!) : price.gte(order.limit!)) ? price : undefined;
    return (order.side === 'buy' ? price.gte(order.stop!) : price.lte(order.stop!)) ? price : undefined;
  }

  /** One observation of the current price: fill in full, or a refusal by the broker (rejected on arrival, canceled later). */
  private match(order: ModelOrder, arriving: boolean): void {
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
    if (order.bracket) this.protect(order);
  }

  /** A filled bracket entry becomes an OCO pair of a take-profit limit and a stop-loss stop. */
  private protect(entry: ModelOrder): void {
    const common = { side: 'sell' as const, qty: entry.filledQty, bracket: null, status: 'working' as const, filledQty: ZERO };
    this.orders.push(
      { ...common, id: `${entry.id}:tp`, kind: 'limit', limit: entry.bracket!.tp, stop: null, leg: 'tp', sibling: `${entry.id}:sl` },
      { ...common, id: `${entry.id}:sl`, kind: 'stop', limit: null, stop: entry.bracket!.sl, leg: 'sl', sibling: `${entry.id}:tp` },
    );
  }

  private end(order: ModelOrder, status: 'canceled' | 'rejected', withSibling: boolean): void {
    order.status = status;
    if (withSibling && order.sibling) {
      const sibling = this.find(order.sibling);
      if (sibling?.status === 'working') sibling.status = 'canceled';
    }
  }
}
