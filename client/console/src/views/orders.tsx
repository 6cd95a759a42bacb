// The orders blotter: one asset class, a status filter and pages; statuses change live as the
// orders socket reports them (orders-feed.ts patches this list's cache). Cancel one or every
// open order of the asset class, replace a working order's quantity or prices, and each order's
// timeline (its audit records: placed, accepted, fills, cancel, by its client order id). A
// bracket's take-profit and stop-loss legs sit under their entry (orders-grouping.ts), and each
// order shows who placed it (metadata.source).
import { Badge, Button, Group, NativeSelect, Paper, Table, Text, Title, type MantineColor } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZReplaceOrderRequest, type TAssetClass, type TOrderResponse } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { TableScroll } from '../table-scroll.tsx';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { orderTerms } from '../format/order-terms.ts';
import { price, quantity, when, type InstrumentSteps } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { groupBracketLegs, legLabel, rowSourceOf, type TBlotterRow } from '../orders-grouping.ts';
import { AssetClassPicker, PaperBadge } from '../pickers.tsx';

const PAGE_SIZE = 20;
/** The blotter's columns, which a timeline or replace form spans. */
const COLUMNS = 10;
const FILTERS = ['', 'pending', 'open', 'filled', 'canceled', 'rejected'] as const;
type TFilter = (typeof FILTERS)[number];
const FILTER_OPTIONS = FILTERS.map((filter) => ({ value: filter, label: filter || 'all' }));
const CANCELABLE = new Set(['pending', 'accepted', 'open', 'partially_filled']);
const REPLACEABLE = new Set(['accepted', 'open', 'partially_filled']);

/** A status's colour: working blue, filled green, refused red, ended grey (its word says the same). */
const STATUS_COLORS: Record<string, MantineColor> = { pending: 'blue', accepted: 'blue', open: 'blue', partially_filled: 'yellow', filled: 'teal', canceled: 'gray', expired: 'gray', rejected: 'red' };
/** Who placed an order, by colour: the bot's and a webhook's stand out from the trader's own. */
const SOURCE_COLORS: Record<string, MantineColor> = { bot: 'yellow', webhook: 'grape' };

const numberOf = (text: string) => (text.trim() === '' ? undefined : Number(text));
const readOrdersAgain = () => queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter());

/** An order's audit records, oldest first: what happened to it, and when. */
const Timeline = ({ order }: { order: TOrderResponse }) => {
  const records = useQuery(trpc.audit.list.queryOptions({ client_order_id: order.client_order_id, page: 1, size: 100 }));
  return (
    <Table.Tr data-testid="order-timeline" className="detail-row">
      <Table.Td colSpan={COLUMNS}>
        <ErrorNotice error={records.error} />
        <ol className="plain-list">
          {records.data?.items
            .slice()
            .reverse()
            .map((record) => (
              <li key={record.id} data-testid="timeline-entry">
                {when(record.created_at)} {record.action.replace(/^order\./, '')}
                {typeof record.data.status === 'string' ? ` (${record.data.status})` : ''}
                {typeof record.data.reason === 'string' ? `: ${record.data.reason}` : ''}
              </li>
            ))}
        </ol>
      </Table.Td>
    </Table.Tr>
  );
};

/** A working order's new quantity, limit or stop (what is left empty stays). */
const ReplaceForm = ({ order, onDone }: { order: TOrderResponse; onDone: () => void }) => {
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const replace = useMutation(trpc.equity.replaceOrder.mutationOptions({ onSuccess: onDone, onSettled: readOrdersAgain }));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const request = checkedRequest(ZReplaceOrderRequest, {
      broker_order_id: order.broker_order_id,
      asset_class: order.asset_class,
      qty: numberOf(fieldText(form, 'qty')),
      limit_price: numberOf(fieldText(form, 'limit_price')),
      stop_price: numberOf(fieldText(form, 'stop_price')),
    }, setFieldErrors);
    if (request) replace.mutate(request);
  };
  return (
    <Table.Tr data-testid="replace-form" className="detail-row">
      <Table.Td colSpan={COLUMNS}>
        <form onSubmit={submit} noValidate className="inline-form">
          <TextField name="qty" label="New quantity" inputMode="decimal" errors={fieldErrors} />
          {order.limit_price !== null ? <TextField name="limit_price" label="New limit price" inputMode="decimal" errors={fieldErrors} /> : null}
          {order.stop_price !== null ? <TextField name="stop_price" label="New stop price" inputMode="decimal" errors={fieldErrors} /> : null}
          <Button type="submit" disabled={replace.isPending}>
            Replace
          </Button>
        </form>
        <ErrorNotice error={replace.error} />
      </Table.Td>
    </Table.Tr>
  );
};

/** Who placed the order, in the contract's words (api, bot, webhook); a leg's is its entry's. */
const SourceBadge = ({ row }: { row: TBlotterRow<TOrderResponse> }) => {
  const placed = rowSourceOf(row);
  return placed ? (
    <Badge variant="light" size="sm" radius="sm" color={SOURCE_COLORS[placed.source] ?? 'gray'} data-testid="order-source" title={placed.ofEntry ? `placed by the service for its entry (${placed.source})` : undefined}>
      {placed.source}
    </Badge>
  ) : (
    <span data-testid="order-source">–</span>
  );
};

const Row = ({
  row,
  instrument,
  opened,
  onToggle,
  onCancel,
  canceling,
  onReplaced,
}: {
  row: TBlotterRow<TOrderResponse>;
  instrument: InstrumentSteps | undefined;
  opened: 'timeline' | 'replace' | undefined;
  onToggle: (id: string, what: 'timeline' | 'replace') => void;
  onCancel: (order: TOrderResponse) => void;
  canceling: boolean;
  onReplaced: () => void;
}) => {
  const { order, leg, underEntry } = row;
  return (
    <>
      <Table.Tr data-testid="order-row" data-client-order-id={order.client_order_id} data-leg={leg?.kind} data-under-entry={underEntry || undefined} className={underEntry ? 'bracket-leg' : undefined}>
        <Table.Td className="nowrap time-cell">{when(order.submitted_at)}</Table.Td>
        <Table.Td className="nowrap" fw={500}>
          {underEntry ? <span aria-hidden="true">↳ </span> : null}
          {order.symbol}
          {leg ? (
            <>
              {' '}
              <Text component="span" size="xs" c="dimmed" fw={400} data-testid="order-leg">
                {legLabel(leg)}
                {underEntry ? '' : ` of ${leg.entryClientOrderId}`}
              </Text>
            </>
          ) : null}
        </Table.Td>
        <Table.Td className={`side-${order.side}`}>{order.side}</Table.Td>
        <Table.Td className="num" data-testid="order-qty">
          {quantity(order.qty, instrument)}
        </Table.Td>
        <Table.Td className="nowrap num-text" data-testid="order-type">
          {orderTerms(order, instrument)}
        </Table.Td>
        <Table.Td className="num">{quantity(order.filled_qty, instrument)}</Table.Td>
        <Table.Td className="num" data-testid="order-avg-price">
          {price(order.avg_fill_price, order.currency, instrument)}
        </Table.Td>
        <Table.Td className="nowrap" data-testid="order-status">
          <Badge variant="light" size="sm" radius="sm" color={STATUS_COLORS[order.status] ?? 'gray'}>
            {order.status}
          </Badge>
        </Table.Td>
        <Table.Td>
          <SourceBadge row={row} />
        </Table.Td>
        <Table.Td>
          <Group gap={4} wrap="nowrap" justify="flex-end">
            <Button size="compact-xs" variant={opened === 'timeline' ? 'light' : 'subtle'} data-testid="order-timeline-toggle" onClick={() => onToggle(order.broker_order_id, 'timeline')}>
              Timeline
            </Button>
            {REPLACEABLE.has(order.status) ? (
              <Button size="compact-xs" variant={opened === 'replace' ? 'light' : 'subtle'} data-testid="order-replace-toggle" onClick={() => onToggle(order.broker_order_id, 'replace')}>
                Replace
              </Button>
            ) : null}
            {CANCELABLE.has(order.status) ? (
              <Button size="compact-xs" variant="subtle" color="red" onClick={() => onCancel(order)} disabled={canceling}>
                Cancel
              </Button>
            ) : null}
          </Group>
        </Table.Td>
      </Table.Tr>
      {opened === 'timeline' ? <Timeline order={order} /> : null}
      {opened === 'replace' ? <ReplaceForm order={order} onDone={onReplaced} /> : null}
    </>
  );
};

export const Orders = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [status, setStatus] = useState<TFilter>('');
  const [page, setPage] = useState(1);
  const [done, setDone] = useState<string>();
  const [opened, setOpened] = useState<{ id: string; what: 'timeline' | 'replace' }>();
  const instrumentOf = useInstrumentOf();
  const orders = useQuery(trpc.equity.listOrders.queryOptions({ asset_class: assetClass, page, size: PAGE_SIZE, ...(status ? { status } : {}) }, { retry: false }));
  const cancel = useMutation(
    trpc.equity.cancelOrder.mutationOptions({
      onMutate: () => setDone(undefined),
      onSuccess: (_result, input) => setDone(`Cancel of ${input.broker_order_id} sent`),
      onSettled: readOrdersAgain,
    }),
  );
  const cancelAll = useMutation(
    trpc.equity.cancelAllOrders.mutationOptions({
      onMutate: () => setDone(undefined),
      onSuccess: (result) => setDone(`${result.canceled.length} order(s) canceled${result.failed.length > 0 ? `, ${result.failed.length} could not be` : ''}`),
      onSettled: readOrdersAgain,
    }),
  );
  const toggle = (id: string, what: 'timeline' | 'replace') => setOpened(opened?.id === id && opened.what === what ? undefined : { id, what });
  const pages = orders.data ? Math.max(1, Math.ceil(orders.data.total / PAGE_SIZE)) : 1;
  const cancelOrder = (order: TOrderResponse) => cancel.mutate({ broker_order_id: order.broker_order_id, asset_class: order.asset_class, symbol: order.symbol });

  return (
    <section>
      <Title order={1} mb="md">
        Orders <PaperBadge />
      </Title>
      <div className="filters">
        <AssetClassPicker value={assetClass} onChange={(next) => (setAssetClass(next), setPage(1))} />
        <NativeSelect name="status" label="Status" value={status} data={FILTER_OPTIONS} onChange={(event) => (setStatus(FILTERS.find((filter) => filter === event.currentTarget.value) ?? ''), setPage(1))} />
        <Button variant="light" color="red" data-testid="cancel-all" disabled={cancelAll.isPending} onClick={() => cancelAll.mutate({ asset_class: assetClass, mode: 'paper' })}>
          Cancel all open orders
        </Button>
      </div>
      <ErrorNotice error={orders.error ?? cancel.error ?? cancelAll.error} />
      <DoneNotice text={done} />
      {orders.isPending ? (
        <Text size="sm" c="dimmed">
          Loading…
        </Text>
      ) : null}
      {orders.data && orders.data.items.length === 0 ? (
        <Paper withBorder p="md" className="panel">
          <Text size="sm" c="dimmed" data-testid="no-orders">
            No orders.
          </Text>
        </Paper>
      ) : null}
      {orders.data && orders.data.items.length > 0 ? (
        <Paper withBorder className="panel table-panel">
          <TableScroll label="Order list">
            <Table data-testid="orders" highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Submitted</Table.Th>
                  <Table.Th>Symbol</Table.Th>
                  <Table.Th>Side</Table.Th>
                  <Table.Th className="num">Qty</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th className="num">Filled</Table.Th>
                  <Table.Th className="num">Avg price</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Source</Table.Th>
                  <Table.Th>
                    <span className="visually-hidden">Actions</span>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {groupBracketLegs(orders.data.items).map((row) => (
                  <Row key={row.order.broker_order_id} row={row} instrument={instrumentOf(row.order.asset_class, row.order.symbol)} opened={opened?.id === row.order.broker_order_id ? opened.what : undefined} onToggle={toggle} onCancel={cancelOrder} canceling={cancel.isPending} onReplaced={() => setOpened(undefined)} />
                ))}
              </Table.Tbody>
            </Table>
          </TableScroll>
        </Paper>
      ) : null}
      <Group gap="xs" mt="sm" className="pager">
        <Button variant="default" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </Button>
        <Text component="span" size="sm" c="dimmed" data-testid="page">
          page {page} of {pages}
        </Text>
        <Button variant="default" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </Button>
      </Group>
    </section>
  );
};
