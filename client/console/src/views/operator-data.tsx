// The operator's data tools: prices set on the simulator and market data loaded into the store.
import { Button, Input, Stack, Switch, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZInstrumentUpsert, ZOhlcvImport, ZSimPriceRequest, type TAssetClass } from '@trading-service/client';
import { trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldErrorsOf, fieldText, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES } from '../format.ts';
import { AssetClassField, Field, Hint, Panel } from './page-kit.tsx';

export const SimulatorPanel = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const setPrice = useMutation(trpc.admin.setSimPrice.mutationOptions());
  const outage = useMutation(trpc.admin.setSimOutage.mutationOptions());
  const submitPrice = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const price = fieldText(form, 'price');
    const request = checkedRequest(ZSimPriceRequest, { asset_class: assetClass, symbol: fieldText(form, 'symbol'), price: price === '' ? null : Number(price) }, setFieldErrors);
    if (request) setPrice.mutate(request);
  };
  return (
    <Panel title="Simulator" testId="simulator-panel">
      <Stack gap="sm">
        <form className="pages-form" onSubmit={submitPrice} noValidate data-testid="sim-price-form">
          <AssetClassField value={assetClass} onChange={setAssetClass} />
          <Field name="symbol" label="Symbol" placeholder="BTC/USDT" errors={fieldErrors} />
          <Field name="price" label="Price (empty: back to the walk)" inputMode="decimal" errors={fieldErrors} />
          <div className="pages-actions">
            <Button type="submit" disabled={setPrice.isPending}>
              Set price
            </Button>
          </div>
        </form>
        <DoneNotice text={setPrice.data ? `${setPrice.data.symbol} trades at ${setPrice.data.price} (${setPrice.data.source}).` : undefined} />
        <div>
          <Title order={3}>Outages</Title>
          <Hint>A simulated outage answers every order of the asset class with 502 BROKER_UNAVAILABLE.</Hint>
        </div>
        <div className="pages-actions">
          {ASSET_CLASSES.map((each) => (
            <Button key={each} variant={outage.data?.[each] ? 'light' : 'default'} color={outage.data?.[each] ? 'red' : undefined} disabled={outage.isPending} onClick={() => outage.mutate({ asset_class: each, down: !(outage.data?.[each] ?? false) })}>
              {outage.data?.[each] ? `End the ${ASSET_CLASS_NAMES[each]} outage` : `Take ${ASSET_CLASS_NAMES[each]} down`}
            </Button>
          ))}
        </div>
        <ErrorNotice error={setPrice.error ?? outage.error} />
      </Stack>
    </Panel>
  );
};

export const MarketDataPanel = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('us_equity');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const upsert = useMutation(trpc.admin.upsertInstrument.mutationOptions());
  const importBars = useMutation(trpc.admin.importOhlcv.mutationOptions());
  const submitInstrument = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const request = checkedRequest(ZInstrumentUpsert, {
      asset_class: assetClass,
      symbol: fieldText(form, 'symbol'),
      exchange: fieldText(form, 'exchange'),
      currency: fieldText(form, 'currency'),
      name: fieldText(form, 'name'),
      reference_price: fieldText(form, 'reference_price'),
      tick_size: fieldText(form, 'tick_size') || undefined,
      lot_size: fieldText(form, 'lot_size'),
      fractional: form.get('fractional') === 'on',
    }, setFieldErrors);
    if (request) upsert.mutate(request);
  };
  const submitBars = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const file = form.get('csv');
    const csv = file instanceof File && file.size > 0 ? await file.text() : '';
    const checked = ZOhlcvImport.safeParse({ asset_class: assetClass, symbol: fieldText(form, 'bars_symbol'), csv: csv || undefined });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues.map((issue) => ({ ...issue, path: issue.path[0] === 'symbol' ? ['bars_symbol'] : ['csv'] }))));
    if (checked.success) importBars.mutate(checked.data);
  };
  return (
    <Panel title="Instruments and bars" testId="market-data-panel">
      <Stack gap="sm">
        <AssetClassField value={assetClass} onChange={setAssetClass} />
        <form className="pages-form" onSubmit={submitInstrument} noValidate data-testid="instrument-form">
          <Title order={3}>Instrument</Title>
          <div className="pages-fields pages-fields-pair">
            <Field name="symbol" label="Symbol" errors={fieldErrors} />
            <Field name="exchange" label="Exchange" placeholder="NASDAQ" errors={fieldErrors} />
            <Field name="currency" label="Currency" placeholder="USD" errors={fieldErrors} />
            <Field name="name" label="Name" errors={fieldErrors} />
            <Field name="reference_price" label="Reference price" inputMode="decimal" errors={fieldErrors} />
            <Field name="tick_size" label="Tick size (not for KRX)" inputMode="decimal" errors={fieldErrors} />
            <Field name="lot_size" label="Lot size" inputMode="decimal" errors={fieldErrors} />
          </div>
          <Switch name="fractional" label="fractional quantities" size="sm" />
          <div className="pages-actions">
            <Button type="submit" disabled={upsert.isPending}>
              Save instrument
            </Button>
          </div>
        </form>
        <DoneNotice text={upsert.data ? `${upsert.data.symbol} saved.` : undefined} />
        <form className="pages-form" onSubmit={(event) => void submitBars(event)} noValidate data-testid="bars-form">
          <Title order={3}>Daily bars</Title>
          <Field name="bars_symbol" label="Symbol of the bars" errors={fieldErrors} />
          <Input.Wrapper
            label="Daily bars (CSV: date,open,high,low,close,volume)"
            labelProps={{ htmlFor: 'bars-csv' }}
            error={fieldErrors.csv ? <span data-testid="field-error-csv">{fieldErrors.csv}</span> : undefined}
          >
            <input id="bars-csv" className="pages-file" type="file" name="csv" accept=".csv,text/csv" />
          </Input.Wrapper>
          <div className="pages-actions">
            <Button type="submit" disabled={importBars.isPending}>
              Import bars
            </Button>
          </div>
        </form>
        <DoneNotice text={importBars.data ? `Bars imported for ${importBars.data.symbol}.` : undefined} />
        <ErrorNotice error={upsert.error ?? importBars.error} />
      </Stack>
    </Panel>
  );
};
