// What an order's recorded fill sets off in the fill's own transaction, wherever the fill is
// recorded (the intake's broker events, the reconciler's fills made while nobody listened): an
// entry's exits the emulator holds armed with it, an emulated OCO leg's sibling ended or made
// smaller. One place, so that a fill reaches the emulator the same way by either path.
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import type { TOrderEvent } from '../../contracts/orders.ts';
import type { Tx } from '../db/client.ts';
import type { OrderRow } from '../db/schema/index.ts';

export type TFill = NonNullable<TBrokerEvent['fill']>;

export interface FillFollowUps {
  /** The exits the emulator holds for an entry, armed (or grown) with its fill (emulator/exits.ts). */
  armExits?: (tx: Tx, entry: OrderRow, fill: TFill) => Promise<TOrderEvent[]>;
  /** An emulated OCO leg's fill ends its sibling (or makes it smaller) (emulator/oco.ts). */
  settleOco?: (tx: Tx, leg: OrderRow) => Promise<TOrderEvent[]>;
}

/** In the fill's transaction, `row` as the fill left it: the follow-ups' order events (in the outbox already). */
export const followFill = async ({ armExits, settleOco }: FillFollowUps, tx: Tx, row: OrderRow, fill: TFill): Promise<TOrderEvent[]> => {
  const exits = armExits ? await armExits(tx, row, fill) : [];
  const settled = settleOco ? await settleOco(tx, row) : [];
  return [...exits, ...settled];
};
