// What the simulator offers the rest of the service: its accounts' brokers, the placement in its
// own transaction with the caller's steps (the order service's in-books submission), prices,
// outages and its loop. simulator.ts builds it.
import type { TBrokerEvent, TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Tx } from '../../db/client.ts';
import type { BrokerRejectedError, Broker, BrokerAccount, BrokerAnswer, BrokerOrder, BrokerOrderRequest, BrokerSnapshot, FundsRejectedError } from '../types.ts';
import type { PriceUpdate } from './market.ts';
import type { AccountEquityRow } from './queries.ts';

export interface AccountRef {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
}

/** The caller's part of a placement in the simulator's transaction (Simulator.placeInBooks). */
export interface InBooksSteps<T> {
  /** Runs first; false withdraws the placement (the broker takes nothing). */
  intent?: (tx: Tx) => Promise<boolean>;
  /**
   * The caller's rules judged on the account as it stands under the lock (the order service's
   * risk rules): run after `intent` and before the books' own checks, on the account, its
   * positions and working orders as a snapshot reports them, read with the lock, and the symbol's
   * current price (decimal text); what else it reads, it reads through `tx`. A refusal it answers
   * refuses the placement as the books' own would (`undoIntent` then runs).
   */
  judge?: (tx: Tx, account: BrokerSnapshot, price: string) => Promise<FundsRejectedError | undefined>;
  /**
   * Runs in the same transaction when the books refuse the order, after `intent`: true when it
   * took the intent back (what it writes instead commits, the intent does not). Only a refusal
   * runs it: a placement the books take pays nothing for it.
   */
  undoIntent?: (tx: Tx, refusal: BrokerRejectedError) => Promise<boolean>;
  record: (tx: Tx, answer: BrokerAnswer) => Promise<T>;
}

/** What committed of a placement made with Simulator.placeInBooks. */
export type InBooksPlacement<T> =
  | { outcome: 'taken'; order: BrokerOrder; recorded: T }
  /** The intent step answered false: nothing of the broker's was written. */
  | { outcome: 'withdrawn' }
  /** The broker refused the order: the intent committed, the broker took nothing. */
  | { outcome: 'refused'; error: BrokerRejectedError }
  /** The broker refused the order and the `undoIntent` step took the intent back: only what that step wrote committed. */
  | { outcome: 'undone'; error: BrokerRejectedError };

export interface Simulator {
  readonly instanceId: string;
  /** The Broker of one account; the account opens on its first call. */
  brokerFor(account: AccountRef): Broker;
  /**
   * A placement in the account's books with the caller's steps in the simulator's own
   * transaction, since its books live in this service's database: `intent` runs first (the
   * caller's record that it means to place the order); when it answers false the broker takes
   * nothing. `record` then runs on the broker's answer and the events that came with it. So the
   * intent, the broker's acceptance and the caller's record of it commit together, or none of them
   * does: one commit, and no moment at which a crash could leave an order at the broker that we
   * have no record of. The events are emitted after commit as usual. The order service's in-books
   * submission places through it; no remote broker can offer this.
   *
   * It answers what committed (a broker refusal commits the intent without an order, unless
   * `undoIntent` takes the intent back in the same transaction); it throws
   * only when nothing of the call committed, the intent included. It fails as the account's Broker
   * does while the asset class is down.
   */
  placeInBooks<T>(account: AccountRef, request: BrokerOrderRequest, steps: InBooksSteps<T>): Promise<InBooksPlacement<T>>;
  /** Opens the account with its starting cash; an existing account is kept as it is. */
  openAccount(account: AccountRef): Promise<void>;
  /** Resets the paper account: open orders canceled, positions removed, cash back to the starting amount. */
  resetAccount(opts: { userId: number; assetClass: TAssetClass }): Promise<{ account: BrokerAccount; canceledOrders: number }>;
  /** Sets an operator's price (null clears it) and matches that symbol's resting orders at once. */
  setPrice(opts: { assetClass: TAssetClass; symbol: string; price: string | null }): Promise<PriceUpdate>;
  setOutage(opts: { assetClass: TAssetClass; down: boolean; by?: string }): Promise<Record<TAssetClass, boolean>>;
  isDown(assetClass: TAssetClass): boolean;
  outages(): Record<TAssetClass, boolean>;
  priceOf(opts: { assetClass: TAssetClass; symbol: string }): Promise<string>;
  /**
   * Every account's equity at current prices in one read (or one user's asset class): what the
   * kill switch sweeps. A real broker adapter would answer it from its own account feed.
   */
  accountEquities(only?: { userId: number; assetClass: TAssetClass }): Promise<AccountEquityRow[]>;
  /** One walk step for the symbols with working orders or positions (not the operator-priced ones), then matching. */
  tick(): Promise<void>;
  /** One matching round of every working order against the current prices. */
  matchResting(): Promise<void>;
  /** Expires working orders whose session has closed; returns how many. */
  expireDayOrders(): Promise<number>;
  /** One round of the leased loop: takes or renews the lease, and when held ticks and expires. */
  runLeased(): Promise<boolean>;
  holdsLease(): boolean;
  /** Every account's broker events in this instance (the order service's intake). */
  onEvent(listener: (event: TBrokerEvent) => void): () => void;
  /** Price changes made in this instance (walk ticks and operator prices). */
  onPrice(listener: (update: PriceUpdate) => void): () => void;
  /** Resolves when the fills this instance started after placements have finished. */
  idle(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

