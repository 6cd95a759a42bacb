// The orders blotter: one asset class, a status filter and pages; statuses change live as the
// orders socket reports them (orders-feed.ts patches this list's cache). Cancel one or every
// open order of the asset class, replace a working order's quantity or prices, and each order's
// timeline (its audit records: placed, accepted, fills, cancel, by its client order id). A
// bracket's take-profit and stop-loss legs sit under their entry (orders-grouping.ts), and each
// order shows who placed it (metadata.source).
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZReplaceOrderRequest, type TAssetClass, type TOrderResponse } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
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
const CANCELABLE = new Set(['pending', 'accepted', 'open', 'partially_filled']);
const REPLACEABLE = new Set(['accepted', 'open', 'partially_filled']);

const numberOf = (text: string) => (text.trim() === '' ? undefined : Number(text));
const readOrdersAgain = () => queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter());

/** An order's audit records, oldest first: what happened to it, and when. */
const Timeline = ({ order }: { order: TOrderResponse }) => {
  const records = useQuery(trpc.audit.list.queryOptions({ client_order_id: order.client_order_id, page: 1, size: 100 }));
  return (
    <tr data-testid="order-timeline">
      <td colSpan={COLUMNS}>
        <ErrorNotice error={records.error} />
        <ol>
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
      </td>
    </tr>
  );
};

/** A working order's new quantity, limit or stop (what is left empty stays). */
const ReplaceForm = ({ order, onDone }: { order: TOrderResponse; onDone: () => void }) => {
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const replace = useMutation(trpc.equity.replaceOrder.mutationOptions({ onSuccess: onDone, onSettled: readOrdersAgain }));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const checked = ZReplaceOrderRequest.safeParse({
      broker_order_id: order.broker_order_id,
      asset_class: order.asset_class,
      qty: numberOf(fieldText(form, 'qty')),
      limit_price: numberOf(fieldText(form, 'limit_price')),
      stop_price: numberOf(fieldText(form, 'stop_price')),
    });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) replace.mutate(checked.data);
  };
  return (
    <tr data-testid="replace-form">
      <td colSpan={COLUMNS}>
        <form onSubmit={submit} noValidate>
          <TextField name="qty" label="New quantity" inputMode="decimal" errors={fieldErrors} />
          {order.limit_price !== null ? <TextField name="limit_price" label="New limit price" inputMode="decimal" errors={fieldErrors} /> : null}
          {order.stop_price !== null ? <TextField name="stop_price" label="New stop price" inputMode="decimal" errors={fieldErrors} /> : null}
          <button type="submit" disabled={replace.isPending}>
            Replace
          </button>
        </form>
        <ErrorNotice error={replace.error} />
      </td>
    </tr>
  );
};

/** Who placed the order, in the contract's words (api, bot, webhook); a leg's is its entry's. */
const SourceBadge = ({ row }: { row: TBlotterRow<TOrderResponse> }) => {
  const placed = rowSourceOf(row);
  return placed ? (
    <span className={`badge source source-${placed.source}`} data-testid="order-source" title={placed.ofEntry ? `placed by the service for its entry (${placed.source})` : undefined}>
      {placed.source}
    </span>
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
      <tr data-testid="order-row" data-client-order-id={order.client_order_id} data-leg={leg?.kind} data-under-entry={underEntry || undefined} className={underEntry ? 'bracket-leg' : undefined}>
        <td>{when(order.submitted_at)}</td>
        <td>
          {underEntry ? <span aria-hidden="true">↳ </span> : null}
          {order.symbol}
          {leg ? (
            <>
              {' '}
              <span className="hint" data-testid="order-leg">
                {legLabel(leg)}
                {underEntry ? '' : ` of ${leg.entryClientOrderId}`}
              </span>
            </>
          ) : null}
        </td>
        <td>{order.side}</td>
        <td data-testid="order-qty">{quantity(order.qty, instrument)}</td>
        <td data-testid="order-type">{orderTerms(order, instrument)}</td>
        <td>{quantity(order.filled_qty, instrument)}</td>
        <td data-testid="order-avg-price">{price(order.avg_fill_price, order.currency, instrument)}</td>
        <td data-testid="order-status">{order.status}</td>
        <td>
          <SourceBadge row={row} />
        </td>
        <td>
          <button type="button" data-testid="order-timeline-toggle" onClick={() => onToggle(order.broker_order_id, 'timeline')}>
            Timeline
          </button>{' '}
          {REPLACEABLE.has(order.status) ? (
            <button type="button" data-testid="order-replace-toggle" onClick={() => onToggle(order.broker_order_id, 'replace')}>
              Replace
            </button>
          ) : null}{' '}
          {CANCELABLE.has(order.status) ? (
            <button type="button" onClick={() => onCancel(order)} disabled={canceling}>
              Cancel
            </button>
          ) : null}
        </td>
      </tr>
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
        <button type="button" data-testid="cancel-all" disabled={cancelAll.isPending} onClick={() => cancelAll.mutate({ asset_class: assetClass, mode: 'paper' })}>
          Cancel all open orders
        </button>
      </div>
      <ErrorNotice error={orders.error ?? cancel.error ?? cancelAll.error} />
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
              <th>Source</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {groupBracketLegs(orders.data.items).map((row) => (
              <Row key={row.order.broker_order_id} row={row} instrument={instrumentOf(row.order.asset_class, row.order.symbol)} opened={opened?.id === row.order.broker_order_id ? opened.what : undefined} onToggle={toggle} onCancel={cancelOrder} canceling={cancel.isPending} onReplaced={() => setOpened(undefined)} />
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
