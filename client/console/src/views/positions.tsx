// Positions of one asset class's paper account, each closable at market.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TAssetClass } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { direction, percent, pnl, price, quantity } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { AssetClassPicker, PaperBadge } from '../pickers.tsx';

export const Positions = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const instrumentOf = useInstrumentOf();
  const positions = useQuery(trpc.equity.positions.queryOptions({ asset_class: assetClass, mode: 'paper' }, { retry: false }));
  const close = useMutation(
    trpc.equity.closePosition.mutationOptions({
      onSettled: () => Promise.all([queryClient.invalidateQueries(trpc.equity.positions.pathFilter()), queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter())]),
    }),
  );
  return (
    <section>
      <h1>
        Positions <PaperBadge />
      </h1>
      <AssetClassPicker value={assetClass} onChange={setAssetClass} />
      <ErrorNotice error={positions.error ?? close.error} />
      <DoneNotice text={close.data ? `Close order ${close.data.client_order_id} ${close.data.status}: sell ${quantity(close.data.qty, instrumentOf(close.data.asset_class, close.data.symbol))} ${close.data.symbol} at market (paper)` : undefined} />
      {positions.isPending ? <p>Loading…</p> : null}
      {positions.data && positions.data.items.length === 0 ? <p data-testid="no-positions">No positions.</p> : null}
      {positions.data && positions.data.items.length > 0 ? (
        <table data-testid="positions">
          <thead>
            <tr>
              <th>Symbol</th>
              <th>Side</th>
              <th>Qty</th>
              <th>Entry</th>
              <th>Price</th>
              <th>Unrealized P&amp;L</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {positions.data.items.map((position) => {
              const instrument = instrumentOf(position.asset_class, position.symbol);
              return (
              <tr key={position.symbol} data-testid="position-row" data-symbol={position.symbol}>
                <td>{position.symbol}</td>
                <td>{position.side}</td>
                <td data-testid="position-qty">{quantity(position.qty, instrument)}</td>
                <td>{price(position.avg_entry_price, position.currency, instrument)}</td>
                <td>{price(position.current_price, position.currency, instrument)}</td>
                <td data-testid="position-pnl" className={direction(position.unrealized_pnl, position.currency)}>
                  {pnl(position.unrealized_pnl, position.currency)} ({percent(position.unrealized_pnl_pct)})
                </td>
                <td>
                  <button type="button" disabled={close.isPending} onClick={() => close.mutate({ asset_class: position.asset_class, symbol: position.symbol, mode: 'paper' })}>
                    Close
                  </button>
                </td>
              </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};
