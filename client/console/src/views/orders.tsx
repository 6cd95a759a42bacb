// The orders blotter: one asset class, a status filter and pages; statuses change live as the
// orders socket reports them (orders-feed.ts patches this list's cache).
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TAssetClass, TOrderResponse } from '../../../index.ts';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { money, quantity, when } from '../format.ts';
import { AssetClassPicker, PaperBadge } from '../pickers.tsx';

const PAGE_SIZE = 20;
const FILTERS = ['', 'pending', 'open', 'filled', 'canceled', 'rejected'] as const;
type TFilter = (typeof FILTERS)[number];
const CANCELABLE = new Set(['pending', 'accepted', 'open', 'partially_filled']);

export const Orders = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [status, setStatus] = useState<TFilter>('');
  const [page, setPage] = useState(1);
  const [done, setDone] = useState<string>();
  const orders = useQuery(trpc.equity.listOrders.queryOptions({ asset_class: assetClass, page, size: PAGE_SIZE, ...(status ? { status } : {}) }, { retry: false }));
  const cancel = useMutation(
    trpc.equity.cancelOrder.mutationOptions({
      onMutate: () => setDone(undefined),
      onSuccess: (_result, input) => setDone(`Cancel of ${input.broker_order_id} sent`),
      onSettled: () => queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter()),
    }),
  );
  const pages = orders.data ? Math.max(1, Math.ceil(orders.data.total / PAGE_SIZE)) : 1;
  const cancelOrder = (order: TOrderResponse) => cancel.mutate({ broker_order_id: order.broker_order_id, asset_class: order.asset_class, symbol: order.symbol });

  return (
    <section>
      <h1>
        Orders <PaperBadge />
      </h1>
      <div className="filters">
        <AssetClassPicker value={assetClass} onChange={(next) => (setAssetClass(next), setPage(1))} />
        <label>
          Status{' '}
          <select name="status" value={status} onChange={(event) => (setStatus(event.target.value as TFilter), setPage(1))}>
            {FILTERS.map((filter) => (
              <option key={filter} value={filter}>
                {filter || 'all'}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNotice error={orders.error ?? cancel.error} />
      <DoneNotice text={done} />
      {orders.isPending ? <p>Loading…</p> : null}
      {orders.data && orders.data.items.length === 0 ? <p data-testid="no-orders">No orders.</p> : null}
      {orders.data && orders.data.items.length > 0 ? (
        <table data-testid="orders">
          <thead>
            <tr>
              <th>Submitted</th>
              <th>Symbol</th>
              <th>Side</th>
              <th>Qty</th>
              <th>Type</th>
              <th>Filled</th>
              <th>Avg price</th>
              <th>Status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {orders.data.items.map((order) => (
              <tr key={order.broker_order_id} data-testid="order-row" data-client-order-id={order.client_order_id}>
                <td>{when(order.submitted_at)}</td>
                <td>{order.symbol}</td>
                <td>{order.side}</td>
                <td>{quantity(order.qty)}</td>
                <td>{order.order_type === 'limit' ? `limit ${money(order.limit_price, order.currency)}` : order.order_type}</td>
                <td>{quantity(order.filled_qty)}</td>
                <td data-testid="order-avg-price">{money(order.avg_fill_price, order.currency)}</td>
                <td data-testid="order-status">{order.status}</td>
                <td>
                  {CANCELABLE.has(order.status) ? (
                    <button type="button" onClick={() => cancelOrder(order)} disabled={cancel.isPending}>
                      Cancel
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="pager">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span data-testid="page">
          page {page} of {pages}
        </span>
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </div>
    </section>
  );
};
