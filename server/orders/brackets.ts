// An entry's exit legs as the order service keeps and sends them (DESIGN §6 "Advanced orders"): the
// request's bracket as its row keeps it (an oto leaves a leg null, a trailing stop leg keeps its
// trail in place of a stop_loss), as its broker is sent it, and as the order reads. Pure.
import type { TBracketSpec, TOrderResponse } from '../../contracts/orders.ts';
import type { BrokerBracket } from '../brokers/types.ts';
import type { OrderBracket } from '../db/schema/index.ts';
import { trailMetadataOf, trailRequestOf } from './trailing.ts';

/** The bracket as the order's row keeps it. */
export const bracketRowOf = (bracket: TBracketSpec): OrderBracket => ({
  take_profit: bracket.take_profit ?? null,
  stop_loss: bracket.stop_loss ?? null,
  stop_loss_limit: bracket.stop_loss_limit ?? null,
  ...trailMetadataOf(bracket),
});

const textOrNull = (value: number | null | undefined) => (value == null ? null : String(value));

/** The bracket as its broker is sent it (and the gates judge it): decimal text, a trail in place of a stop_loss. */
export const brokerBracketOf = (bracket: TBracketSpec | OrderBracket): BrokerBracket => {
  const trail = trailRequestOf(bracket);
  return {
    takeProfit: textOrNull(bracket.take_profit),
    stopLoss: textOrNull(bracket.stop_loss),
    stopLossLimit: textOrNull(bracket.stop_loss_limit),
    ...(trail ? { trail } : {}),
  };
};

/** The bracket as the order reads. */
export const bracketResponseOf = (bracket: OrderBracket): NonNullable<TOrderResponse['bracket']> => ({
  take_profit: bracket.take_profit,
  stop_loss: bracket.stop_loss,
  stop_loss_limit: bracket.stop_loss_limit,
  ...trailMetadataOf(bracket),
});
