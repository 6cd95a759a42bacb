// The orders socket (/ws/equity/orders) while signed in: each order event patches the cached
// lists at once and has the orders, positions and accounts read again; after every
// (re)connect the client backfills through GET /api/equity/orders. Reconnects back off by themselves.
import { useEffect, useState } from 'react';
import type { TChannelState, TOrderEventFrame, TOrderList } from '@trading-service/client';
import { queryClient, tradingClient, trpc } from './api.ts';

export type TFeedState = TChannelState | 'off';

const patchStatus = (event: TOrderEventFrame) => (list: TOrderList | undefined): TOrderList | undefined =>
  list && {
    ...list,
    items: list.items.map((order) =>
      order.broker_order_id === event.broker_order_id && order.asset_class === event.asset_class
        ? { ...order, status: event.status, filled_qty: event.filled_qty, avg_fill_price: event.avg_fill_price ?? order.avg_fill_price }
        : order,
    ),
  };

const readAgain = () => {
  void queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter());
  void queryClient.invalidateQueries(trpc.equity.positions.pathFilter());
  void queryClient.invalidateQueries(trpc.equity.account.pathFilter());
  // Today's point of the equity curve is the account now.
  void queryClient.invalidateQueries(trpc.equity.portfolioHistory.pathFilter());
  // A lock by the kill switch comes with the cancels of the account's open orders.
  void queryClient.invalidateQueries(trpc.live.status.pathFilter());
};

export const useOrdersFeed = (enabled: boolean): TFeedState => {
  const [state, setState] = useState<TFeedState>('off');
  useEffect(() => {
    if (!enabled) {
      setState('off');
      return;
    }
    const channel = tradingClient.followOrders({
      onEvent: (event) => {
        queryClient.setQueriesData<TOrderList>(trpc.equity.listOrders.pathFilter(), patchStatus(event));
        readAgain();
      },
      onBackfill: () => readAgain(),
      onState: (next) => setState(next),
    });
    return () => channel.close();
  }, [enabled]);
  return state;
};
