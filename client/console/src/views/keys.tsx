// Exchange keys: add a paper key (the secret is write-only: sent once, never shown again), test
// the same fields against the broker first (nothing is stored), and the list, masked as the API
// returns it, with activation and deletion.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { EXCHANGE_OF_ASSET_CLASS, ZExchangeKeyCreate, ZExchangeKeyTestRequest, type TAssetClass } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, when } from '../format.ts';
import { AssetClassPicker } from '../pickers.tsx';

export const Keys = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const keys = useQuery(trpc.exchangeKeys.list.queryOptions({}));
  const readAgain = () => Promise.all([queryClient.invalidateQueries(trpc.exchangeKeys.list.pathFilter()), queryClient.invalidateQueries(trpc.equity.account.pathFilter())]);
  const create = useMutation(trpc.exchangeKeys.create.mutationOptions({ onSettled: readAgain }));
  const test = useMutation(trpc.exchangeKeys.test.mutationOptions());
  const change = useMutation(trpc.exchangeKeys.update.mutationOptions({ onSettled: readAgain }));
  const remove = useMutation(trpc.exchangeKeys.remove.mutationOptions({ onSettled: readAgain }));

  /** The dry run of the fields as they stand: the broker's answer, nothing stored. */
  const testFields = (formElement: HTMLFormElement | null) => {
    if (!formElement) return;
    const form = new FormData(formElement);
    const checked = ZExchangeKeyTestRequest.safeParse({
      asset_class: assetClass,
      exchange: EXCHANGE_OF_ASSET_CLASS[assetClass],
      api_key: fieldText(form, 'api_key'),
      api_secret: fieldText(form, 'api_secret'),
      paper_mode: true,
    });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) test.mutate(checked.data);
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const checked = ZExchangeKeyCreate.safeParse({
      asset_class: assetClass,
      exchange: EXCHANGE_OF_ASSET_CLASS[assetClass],
      label: fieldText(form, 'label') || undefined,
      api_key: fieldText(form, 'api_key'),
      api_secret: fieldText(form, 'api_secret'),
      paper_mode: true,
    });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    // The secret leaves the page with the request: the form forgets it at once.
    if (checked.success) create.mutate(checked.data, { onSuccess: () => formElement.reset() });
  };

  return (
    <section>
      <h1>Exchange keys</h1>
      <form onSubmit={submit} noValidate data-testid="key-form">
        <AssetClassPicker value={assetClass} onChange={setAssetClass} />
        <TextField name="label" label="Label" placeholder="default" errors={fieldErrors} />
        <TextField name="api_key" label="API key" errors={fieldErrors} />
        <TextField name="api_secret" label="API secret" type="password" autoComplete="new-password" errors={fieldErrors} />
        <p className="hint">Paper keys only for now. The secret is stored encrypted and never shown again.</p>
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Adding…' : 'Add paper key'}
        </button>{' '}
        <button type="button" data-testid="test-key" disabled={test.isPending} onClick={(event) => testFields(event.currentTarget.form)}>
          {test.isPending ? 'Testing…' : 'Test without saving'}
        </button>
      </form>
      {test.data ? (
        <p className={`notice ${test.data.ok ? 'done' : 'error'}`} data-testid="key-test-result">
          {test.data.ok ? `The broker answers: equity ${test.data.equity} ${test.data.currency}, buying power ${test.data.buying_power} ${test.data.currency}.` : `The broker refused the key: ${test.data.error}`}
        </p>
      ) : null}
      <ErrorNotice error={create.error ?? test.error ?? change.error ?? remove.error ?? keys.error} />
      <DoneNotice text={create.data ? `Key "${create.data.label}" added for ${ASSET_CLASS_NAMES[create.data.asset_class]} (paper)` : undefined} />
      {keys.data && keys.data.length === 0 ? <p data-testid="no-keys">No keys yet.</p> : null}
      {keys.data && keys.data.length > 0 ? (
        <table data-testid="keys">
          <thead>
            <tr>
              <th>Label</th>
              <th>Asset class</th>
              <th>Exchange</th>
              <th>Key</th>
              <th>Mode</th>
              <th>Active</th>
              <th>Added</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.id} data-testid="key-row">
                <td data-testid="key-label">{key.label}</td>
                <td>{ASSET_CLASS_NAMES[key.asset_class]}</td>
                <td>{key.exchange}</td>
                <td data-testid="key-masked">{key.api_key_masked}</td>
                <td>{key.paper_mode ? 'paper' : 'live'}</td>
                <td>{key.is_active ? 'yes' : 'no'}</td>
                <td>{when(key.created_at)}</td>
                <td>
                  <button type="button" data-testid="key-toggle" disabled={change.isPending} onClick={() => change.mutate({ id: key.id, is_active: !key.is_active })}>
                    {key.is_active ? 'Deactivate' : 'Activate'}
                  </button>{' '}
                  <button
                    type="button"
                    data-testid="key-delete"
                    disabled={remove.isPending}
                    onClick={() => {
                      if (window.confirm(`Delete the key "${key.label}"? Its broker is released; orders already placed stay.`)) remove.mutate({ id: key.id });
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};
