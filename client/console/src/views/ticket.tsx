// The order ticket: every order type, time in force, a bracket, paper or live, checked with the
// API's own schema before it is sent. The asset class follows the symbol as it is typed (a pair
// with a slash is crypto, six digits a KRX code, anything else a US ticker) and can be changed.
// One client_order_id per ticket, so sending the same ticket again is the same order
// (idempotent). A refusal says which of the five gates refused it and why. While the form parses,
// a preview under it says what the order would cost and what it leaves of the buying power.
import { Button, Checkbox, Group, NativeSelect, Paper, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { errorCodeOf, ZPlaceOrderRequest, type TAssetClass, type TOrderPreview, type TOrderResponse, type TPlaceOrderRequest } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { FieldError, fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, quantity, type InstrumentSteps } from '../format.ts';
import { orderTerms } from '../format/order-terms.ts';
import { useAllInstruments, useInstrumentOf } from '../instrument-steps.ts';
import { AssetClassPicker, ModeBadge } from '../pickers.tsx';
import { OrderPreview } from './order-preview.tsx';

type TOrderType = TPlaceOrderRequest['order_type'];
const ORDER_TYPES: readonly TOrderType[] = ['market', 'limit', 'stop', 'stop_limit', 'trailing_stop'];
const ORDER_TYPE_OPTIONS = ORDER_TYPES.map((type) => ({ value: type, label: type.replace('_', ' ') }));
/** A trailing stop's trail: a percent of the price, or a price distance (one of the two fields). */
type TTrailUnit = 'percent' | 'price';
const TRAIL_UNIT_OPTIONS = [
  { value: 'percent', label: 'percent of the price' },
  { value: 'price', label: 'price distance' },
];
/** The exits' class: both legs on the fill, one leg on the fill, or a held position's two exits. */
type TExitClass = 'bracket' | 'oto' | 'oco';
const EXIT_CLASS_OPTIONS = [
  { value: 'bracket', label: 'bracket: both legs on the fill' },
  { value: 'oto', label: 'oto: one leg on the fill' },
  { value: 'oco', label: 'oco: a held position’s limit and stop (a sell limit)' },
];
/** The stop leg: a stop (a stop-limit with its limit), or a trailing stop from the fill. */
type TStopLeg = 'stop' | 'trail_percent' | 'trail_price';
const STOP_LEG_OPTIONS = [
  { value: 'stop', label: 'stop at a price' },
  { value: 'trail_percent', label: 'trailing, percent' },
  { value: 'trail_price', label: 'trailing, price distance' },
];
const TIME_IN_FORCE = ['day', 'gtc', 'ioc', 'fok'] as const;
const SIDES = ['buy', 'sell'] as const;
const MODES = ['paper', 'live'] as const;

const exitClassOf = (value: string): TExitClass => (value === 'oto' || value === 'oco' ? value : 'bracket');
const stopLegOf = (value: string): TStopLeg => (value === 'trail_percent' || value === 'trail_price' ? value : 'stop');

const newClientOrderId = () => `console-${crypto.randomUUID()}`;

/** How long the ticket rests before it is previewed: one request per pause in typing, not per key. */
const PREVIEW_DEBOUNCE_MS = 300;

/** A number field as the schema should see it: empty is absent, anything else a number (NaN fails the check). */
const numberOf = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The asset class a symbol is written for, or undefined while it says nothing yet. */
export const assetClassOfSymbol = (symbol: string): TAssetClass | undefined => {
  const text = symbol.trim();
  if (text === '') return undefined;
  if (text.includes('/')) return 'crypto';
  if (/^\d{6}$/.test(text)) return 'kr_equity';
  return /^[A-Za-z][A-Za-z.-]{0,9}$/.test(text) ? 'us_equity' : undefined;
};

/** Which of the five gates (flags → rate limit → broker configured → risk → broker) a refusal came from. */
const GATE_OF_CODE: Record<string, string> = {
  VALIDATION_ERROR: 'the input check, before the gates',
  SERVICE_HALTED: 'the service halt, before the gates',
  FEATURE_DISABLED: 'gate 1, the feature flags',
  LIVE_NOT_ENABLED: 'gate 1, the feature flags (live trading is not enabled for you)',
  RATE_LIMIT_EXCEEDED: 'gate 2, the rate limit',
  RATE_LIMIT_LIVE_DAILY: "gate 2, the live orders' daily limit",
  BROKER_NOT_CONFIGURED: 'gate 3, broker configured',
  RISK_RULE_VIOLATION: 'gate 4, the risk manager',
  MARKET_CLOSED: 'gate 4, the risk manager (market hours)',
  INSUFFICIENT_FUNDS: 'gate 4, the risk manager (funds)',
  BROKER_REJECTED: 'gate 5, the broker',
  BROKER_UNAVAILABLE: 'gate 5, the broker (unreachable)',
  IDEMPOTENCY_CONFLICT: 'the ticket id: another order already has it',
};

const placedText = (order: TOrderResponse, instrument: InstrumentSteps | undefined, live: boolean) =>
  `Order ${order.client_order_id} ${order.status}: ${order.side} ${quantity(order.qty, instrument)} ${order.symbol} ${orderTerms(order, instrument)}` + (live ? ' (live)' : ' (paper)');

export const Ticket = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [orderType, setOrderType] = useState<TOrderType>('market');
  const [trailUnit, setTrailUnit] = useState<TTrailUnit>('percent');
  const [bracket, setBracket] = useState(false);
  const [exitClass, setExitClass] = useState<TExitClass>('bracket');
  const [stopLeg, setStopLeg] = useState<TStopLeg>('stop');
  const [live, setLive] = useState(false);
  const [clientOrderId, setClientOrderId] = useState(newClientOrderId);
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const instrumentOf = useInstrumentOf();
  // The registry's instruments, suggested as the symbol is typed (by symbol or by name).
  const instruments = useAllInstruments();
  const place = useMutation(
    trpc.equity.placeOrder.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.equity.listOrders.pathFilter()),
    }),
  );
  const needsLimit = orderType === 'limit' || orderType === 'stop_limit';
  const needsStop = orderType === 'stop' || orderType === 'stop_limit';
  const trailing = orderType === 'trailing_stop';
  const trailField = trailUnit === 'percent' ? 'trail_percent' : 'trail_price';
  // A trailing stop takes no exit legs (its own trail is its exit).
  const withExits = bracket && !trailing;
  const formRef = useRef<HTMLFormElement>(null);
  // Bumped by every edit of the form's uncontrolled fields, so the preview follows them.
  const [edits, setEdits] = useState(0);
  // The last preview with the request it answered (the sentence names the request's own prices).
  const [previewed, setPreviewed] = useState<{ request: TPlaceOrderRequest; preview: TOrderPreview }>();
  const { mutate: requestPreview, isPending: previewPending, error: previewError, reset: resetPreview } = useMutation(trpc.equity.previewOrder.mutationOptions());

  /** The ticket as the API's own schema reads it. */
  const requestOf = useCallback(
    (formElement: HTMLFormElement) => {
      const form = new FormData(formElement);
      return ZPlaceOrderRequest.safeParse({
        asset_class: assetClass,
        symbol: fieldText(form, 'symbol'),
        side: fieldText(form, 'side'),
        qty: numberOf(fieldText(form, 'qty')),
        order_type: orderType,
        limit_price: needsLimit ? numberOf(fieldText(form, 'limit_price')) : undefined,
        stop_price: needsStop ? numberOf(fieldText(form, 'stop_price')) : undefined,
        trail_percent: trailing && trailUnit === 'percent' ? numberOf(fieldText(form, 'trail_percent')) : undefined,
        trail_price: trailing && trailUnit === 'price' ? numberOf(fieldText(form, 'trail_price')) : undefined,
        time_in_force: fieldText(form, 'time_in_force'),
        order_class: withExits && exitClass !== 'bracket' ? exitClass : undefined,
        bracket: withExits
          ? {
              // An oco's take-profit is its limit_price.
              take_profit: exitClass === 'oco' ? undefined : numberOf(fieldText(form, 'take_profit')),
              stop_loss: stopLeg === 'stop' ? numberOf(fieldText(form, 'stop_loss')) : undefined,
              stop_loss_limit: stopLeg === 'stop' ? (numberOf(fieldText(form, 'stop_loss_limit')) ?? null) : undefined,
              trail_percent: stopLeg === 'trail_percent' ? numberOf(fieldText(form, 'trail_percent')) : undefined,
              trail_price: stopLeg === 'trail_price' ? numberOf(fieldText(form, 'trail_price')) : undefined,
            }
          : undefined,
        client_order_id: clientOrderId,
        live_mode: live,
      });
    },
    [assetClass, orderType, needsLimit, needsStop, trailing, trailUnit, withExits, exitClass, stopLeg, clientOrderId, live],
  );

  // The preview follows the ticket: after a pause, whenever it parses; a ticket that does not
  // parse shows none (the field errors come when it is sent).
  useEffect(() => {
    const checked = formRef.current ? requestOf(formRef.current) : undefined;
    if (!checked?.success) {
      setPreviewed(undefined);
      resetPreview();
      return undefined;
    }
    const timer = setTimeout(() => requestPreview(checked.data, { onSuccess: (preview) => setPreviewed({ request: checked.data, preview }), onError: () => setPreviewed(undefined) }), PREVIEW_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [edits, requestOf, requestPreview, resetPreview]);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const checked = requestOf(event.currentTarget);
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues.map((issue) => (issue.path[0] === 'bracket' ? { ...issue, path: issue.path.slice(1) } : issue))));
    // Once placed, the buying power has changed: the preview is asked again.
    if (checked.success) place.mutate(checked.data, { onSettled: () => setEdits((count) => count + 1) });
  };

  const newTicket = () => {
    setClientOrderId(newClientOrderId());
    place.reset();
  };
  const refusedCode = errorCodeOf(place.error);

  return (
    <section>
      <Title order={1} mb="md">
        Order ticket <ModeBadge mode={live ? 'live' : 'paper'} />
      </Title>
      <div className="ticket-layout">
        <div className="ticket-main">
          <Paper withBorder p="md" className="panel">
            <form ref={formRef} onSubmit={submit} onChange={() => setEdits((count) => count + 1)} noValidate data-testid="ticket" className="ticket-form">
              <div className="field-row">
                <TextField
                  name="symbol"
                  label="Symbol"
                  placeholder="BTC/USDT, AAPL, 005930"
                  list="ticket-instruments"
                  errors={fieldErrors}
                  onChange={(text) => {
                    const inferred = assetClassOfSymbol(text);
                    if (inferred) setAssetClass(inferred);
                  }}
                />
                <datalist id="ticket-instruments" data-testid="ticket-instruments">
                  {instruments.map((instrument) => (
                    <option key={`${instrument.asset_class}:${instrument.symbol}`} value={instrument.symbol}>
                      {instrument.name}, {ASSET_CLASS_NAMES[instrument.asset_class]}
                    </option>
                  ))}
                </datalist>
                <AssetClassPicker value={assetClass} onChange={setAssetClass} />
              </div>
              <div className="field-row">
                <NativeSelect name="side" label="Side" defaultValue="buy" data={SIDES} />
                <TextField name="qty" label="Quantity" inputMode="decimal" errors={fieldErrors} />
              </div>
              <div className="field-row">
                <NativeSelect name="order_type" label="Type" value={orderType} data={ORDER_TYPE_OPTIONS} onChange={(event) => setOrderType(ORDER_TYPES.find((type) => type === event.currentTarget.value) ?? 'market')} />
                <NativeSelect name="time_in_force" label="Time in force" defaultValue="day" data={TIME_IN_FORCE} />
              </div>
              {needsStop || needsLimit ? (
                <div className="field-row">
                  {needsStop ? <TextField name="stop_price" label="Stop price" inputMode="decimal" errors={fieldErrors} /> : null}
                  {needsLimit ? <TextField name="limit_price" label="Limit price" inputMode="decimal" errors={fieldErrors} /> : null}
                </div>
              ) : null}
              {trailing ? (
                <div className="field-row">
                  <NativeSelect name="trail_unit" label="Trail in" value={trailUnit} data={TRAIL_UNIT_OPTIONS} onChange={(event) => setTrailUnit(event.currentTarget.value === 'price' ? 'price' : 'percent')} />
                  <TextField key={trailField} name={trailField} label={trailUnit === 'percent' ? 'Trail (%)' : 'Trail (price)'} inputMode="decimal" errors={fieldErrors} />
                </div>
              ) : null}
              {needsStop ? null : <FieldError errors={fieldErrors} name="stop_price" />}
              {needsLimit ? null : <FieldError errors={fieldErrors} name="limit_price" />}
              <Checkbox
                checked={withExits}
                disabled={trailing}
                onChange={(event) => setBracket(event.currentTarget.checked)}
                label="Bracket (take profit and stop loss on the fill)"
              />
              {withExits ? (
                <>
                  <div className="field-row">
                    <NativeSelect name="order_class" label="Exit legs" value={exitClass} data={EXIT_CLASS_OPTIONS} onChange={(event) => setExitClass(exitClassOf(event.currentTarget.value))} />
                    <NativeSelect name="stop_leg" label="Stop leg" value={stopLeg} data={STOP_LEG_OPTIONS} onChange={(event) => setStopLeg(stopLegOf(event.currentTarget.value))} />
                  </div>
                  <div className="field-row field-row-3">
                    {exitClass === 'oco' ? null : <TextField name="take_profit" label={exitClass === 'oto' ? 'Take profit (or leave it for a stop leg)' : 'Take profit'} inputMode="decimal" errors={fieldErrors} />}
                    {stopLeg === 'stop' ? (
                      <>
                        <TextField name="stop_loss" label="Stop loss" inputMode="decimal" errors={fieldErrors} />
                        <TextField name="stop_loss_limit" label="Stop loss limit (optional)" inputMode="decimal" errors={fieldErrors} />
                      </>
                    ) : (
                      <TextField key={stopLeg} name={stopLeg} label={stopLeg === 'trail_percent' ? 'Stop trails by (%)' : 'Stop trails by (price)'} inputMode="decimal" errors={fieldErrors} />
                    )}
                  </div>
                </>
              ) : null}
              <NativeSelect name="mode" label="Mode" value={live ? 'live' : 'paper'} data={MODES} onChange={(event) => setLive(event.currentTarget.value === 'live')} className="field-half" />
              <Text size="xs" c="dimmed" className="ticket-id">
                Ticket id <code data-testid="client-order-id">{clientOrderId}</code>: sending again places no second order.
              </Text>
              <Group gap="xs">
                <Button type="submit" size="sm" color={live ? 'red' : undefined} disabled={place.isPending}>
                  {place.isPending ? 'Placing…' : live ? 'Place live order' : 'Place paper order'}
                </Button>
                <Button type="button" size="sm" variant="default" onClick={newTicket}>
                  New ticket
                </Button>
              </Group>
            </form>
          </Paper>
          {refusedCode ? (
            <Text size="sm" c="dimmed" mt="sm" data-testid="refused-gate">
              Refused at {GATE_OF_CODE[refusedCode] ?? 'the service'}.
            </Text>
          ) : null}
          <ErrorNotice error={place.error} />
          <DoneNotice text={place.data ? placedText(place.data, instrumentOf(place.data.asset_class, place.data.symbol), live) : undefined} />
        </div>
        <OrderPreview
          preview={previewed?.preview}
          prices={previewed?.request ?? {}}
          instrument={previewed && instrumentOf(previewed.preview.asset_class, previewed.preview.symbol)}
          pending={previewPending}
          error={previewError}
        />
      </div>
    </section>
  );
};
