// The order ticket: paper orders, checked with the API's own schema before they are sent. One
// client_order_id per ticket, so sending the same ticket again is the same order (idempotent).
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZPlaceOrderRequest, type TAssetClass, type TOrderResponse } from '../../../index.ts';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { FieldError, fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { money, quantity } from '../format.ts';
import { AssetClassPicker, PaperBadge } from '../pickers.tsx';

const newClientOrderId = () => `console-${crypto.randomUUID()}`;

/** A number field as the schema should see it: empty is absent, anything else a number (NaN fails the check). */
const numberOf = (text: string) => (text.trim() === '' ? undefined : Number(text));

const placedText = (order: TOrderResponse) =>
  `Order ${order.client_order_id} ${order.status}: ${order.side} ${quantity(order.qty)} ${order.symbol}` +
  (order.limit_price === null ? ' at market' : ` limit ${money(order.limit_price, order.currency)}`) +
  ' (paper)';

export const Ticket = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [orderType, setOrderType] = useState<'market' | 'limit'>('market');
  const [clientOrderId, setClientOrderId] = useState(newClientOrderId);
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const place = useMutation(
    trpc.equity.placeOrder.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter()),
    }),
  );

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const checked = ZPlaceOrderRequest.safeParse({
      asset_class: assetClass,
      symbol: fieldText(form, 'symbol'),
      side: fieldText(form, 'side'),
      qty: numberOf(fieldText(form, 'qty')),
      order_type: orderType,
      limit_price: orderType === 'limit' ? numberOf(fieldText(form, 'limit_price')) : undefined,
      client_order_id: clientOrderId,
      live_mode: false,
    });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) place.mutate(checked.data);
  };

  const newTicket = () => {
    setClientOrderId(newClientOrderId());
    place.reset();
  };

  return (
    <section>
      <h1>
        Order ticket <PaperBadge />
      </h1>
      <form onSubmit={submit} noValidate data-testid="ticket">
        <AssetClassPicker value={assetClass} onChange={setAssetClass} />
        <TextField name="symbol" label="Symbol" placeholder="BTC/USDT, AAPL, 005930" errors={fieldErrors} />
        <label>
          Side{' '}
          <select name="side" defaultValue="buy">
            <option value="buy">buy</option>
            <option value="sell">sell</option>
          </select>
        </label>
        <TextField name="qty" label="Quantity" inputMode="decimal" errors={fieldErrors} />
        <label>
          Type{' '}
          <select name="order_type" value={orderType} onChange={(event) => setOrderType(event.target.value === 'limit' ? 'limit' : 'market')}>
            <option value="market">market</option>
            <option value="limit">limit</option>
          </select>
        </label>
        {orderType === 'limit' ? <TextField name="limit_price" label="Limit price" inputMode="decimal" errors={fieldErrors} /> : <FieldError errors={fieldErrors} name="limit_price" />}
        <p className="hint">
          Ticket id <code data-testid="client-order-id">{clientOrderId}</code>: sending again places no second order.
        </p>
        <button type="submit" disabled={place.isPending}>
          {place.isPending ? 'Placing…' : 'Place paper order'}
        </button>{' '}
        <button type="button" onClick={newTicket}>
          New ticket
        </button>
      </form>
      <ErrorNotice error={place.error} />
      <DoneNotice text={place.data ? placedText(place.data) : undefined} />
    </section>
  );
};
