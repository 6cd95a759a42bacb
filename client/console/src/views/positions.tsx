// Positions of one asset class's paper account, each closable at market.
import { Button, Paper, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TAssetClass } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { TableScroll } from '../table-scroll.tsx';
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
      <Title order={1} mb="md">
        Positions <PaperBadge />
      </Title>
      <div className="filters">
        <AssetClassPicker value={assetClass} onChange={setAssetClass} />
      </div>
      <ErrorNotice error={positions.error ?? close.error} />
      <DoneNotice text={close.data ? `Close order ${close.data.client_order_id} ${close.data.status}: sell ${quantity(close.data.qty, instrumentOf(close.data.asset_class, close.data.symbol))} ${close.data.symbol} at market (paper)` : undefined} />
      {positions.isPending ? (
        <Text size="sm" c="dimmed">
          Loading…
        </Text>
      ) : null}
      {positions.data && positions.data.items.length === 0 ? (
        <Paper withBorder p="md" className="panel">
          <Text size="sm" c="dimmed" data-testid="no-positions">
            No positions.
          </Text>
        </Paper>
      ) : null}
      {positions.data && positions.data.items.length > 0 ? (
        <Paper withBorder className="panel table-panel">
          <TableScroll label="Position list">
            <Table data-testid="positions" highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Symbol</Table.Th>
                  <Table.Th>Side</Table.Th>
                  <Table.Th className="num">Qty</Table.Th>
                  <Table.Th className="num">Entry</Table.Th>
                  <Table.Th className="num">Price</Table.Th>
                  <Table.Th className="num">Unrealized P&amp;L</Table.Th>
                  <Table.Th>
                    <span className="visually-hidden">Actions</span>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {positions.data.items.map((position) => {
                  const instrument = instrumentOf(position.asset_class, position.symbol);
                  return (
                    <Table.Tr key={position.symbol} data-testid="position-row" data-symbol={position.symbol}>
                      <Table.Td fw={500}>{position.symbol}</Table.Td>
                      <Table.Td>{position.side}</Table.Td>
                      <Table.Td className="num" data-testid="position-qty">
                        {quantity(position.qty, instrument)}
                      </Table.Td>
                      <Table.Td className="num">{price(position.avg_entry_price, position.currency, instrument)}</Table.Td>
                      <Table.Td className="num">{price(position.current_price, position.currency, instrument)}</Table.Td>
                      <Table.Td data-testid="position-pnl" className={`num ${direction(position.unrealized_pnl, position.currency)}`}>
                        {pnl(position.unrealized_pnl, position.currency)} ({percent(position.unrealized_pnl_pct)})
                      </Table.Td>
                      <Table.Td ta="right">
                        <Button size="compact-xs" variant="light" disabled={close.isPending} onClick={() => close.mutate({ asset_class: position.asset_class, symbol: position.symbol, mode: 'paper' })}>
                          Close
                        </Button>
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </TableScroll>
        </Paper>
      ) : null}
    </section>
  );
};
