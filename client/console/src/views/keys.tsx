// Exchange keys: add a paper key (the secret is write-only: sent once, never shown again), test
// the same fields against the broker first (nothing is stored), and the list, masked as the API
// returns it, with activation and deletion.
import { Alert, Badge, Button, Code, Stack, Table, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { EXCHANGE_OF_ASSET_CLASS, ZExchangeKeyCreate, ZExchangeKeyTestRequest, type TAssetClass } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldErrorsOf, fieldText, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, when } from '../format.ts';
import { AssetClassField, DataTable, Empty, Field, Hint, ModeBadge, Page, Panel, RowActions } from './page-kit.tsx';

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
    const request = checkedRequest(ZExchangeKeyTestRequest, {
      asset_class: assetClass,
      exchange: EXCHANGE_OF_ASSET_CLASS[assetClass],
      api_key: fieldText(form, 'api_key'),
      api_secret: fieldText(form, 'api_secret'),
      paper_mode: true,
    }, setFieldErrors);
    if (request) test.mutate(request);
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
    <Page title="Exchange keys">
      <div className="pages-split">
        <Panel title="Add a paper key" testId="key-panel">
          <form className="pages-form" onSubmit={submit} noValidate data-testid="key-form">
            <AssetClassField value={assetClass} onChange={setAssetClass} />
            <Field name="label" label="Label" placeholder="default" errors={fieldErrors} />
            <Field name="api_key" label="API key" errors={fieldErrors} />
            <Field name="api_secret" label="API secret" type="password" autoComplete="new-password" errors={fieldErrors} />
            <Hint>Paper keys only for now. The secret is stored encrypted and never shown again.</Hint>
            <div className="pages-actions">
              <Button type="submit" loading={create.isPending}>
                {create.isPending ? 'Adding…' : 'Add paper key'}
              </Button>
              <Button variant="default" data-testid="test-key" loading={test.isPending} onClick={(event) => testFields(event.currentTarget.form)}>
                {test.isPending ? 'Testing…' : 'Test without saving'}
              </Button>
            </div>
          </form>
          <Stack gap="xs" mt="sm">
            {test.data ? (
              <Alert variant="light" color={test.data.ok ? 'green' : 'red'} data-testid="key-test-result">
                {test.data.ok ? `The broker answers: equity ${test.data.equity} ${test.data.currency}, buying power ${test.data.buying_power} ${test.data.currency}.` : `The broker refused the key: ${test.data.error}`}
              </Alert>
            ) : null}
            <ErrorNotice error={create.error ?? test.error ?? change.error ?? remove.error ?? keys.error} />
            <DoneNotice text={create.data ? `Key "${create.data.label}" added for ${ASSET_CLASS_NAMES[create.data.asset_class]} (paper)` : undefined} />
          </Stack>
        </Panel>
        <Panel title="Your keys" testId="keys-panel">
          {keys.data && keys.data.length === 0 ? <Empty testId="no-keys">No keys yet.</Empty> : null}
          {keys.data && keys.data.length > 0 ? (
            <DataTable label="Your keys" testId="keys">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Label</Table.Th>
                  <Table.Th>Asset class</Table.Th>
                  <Table.Th>Exchange</Table.Th>
                  <Table.Th>Key</Table.Th>
                  <Table.Th>Mode</Table.Th>
                  <Table.Th>Active</Table.Th>
                  <Table.Th>Added</Table.Th>
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {keys.data.map((key) => (
                  <Table.Tr key={key.id} data-testid="key-row">
                    <Table.Td data-testid="key-label">{key.label}</Table.Td>
                    <Table.Td className="pages-nowrap">{ASSET_CLASS_NAMES[key.asset_class]}</Table.Td>
                    <Table.Td>{key.exchange}</Table.Td>
                    <Table.Td data-testid="key-masked">
                      <Code>{key.api_key_masked}</Code>
                    </Table.Td>
                    <Table.Td>
                      <ModeBadge live={!key.paper_mode} testId="key-mode" />
                    </Table.Td>
                    <Table.Td>
                      <Badge component="span" variant="light" color={key.is_active ? 'green' : 'gray'} size="sm">
                        {key.is_active ? 'active' : 'inactive'}
                      </Badge>
                    </Table.Td>
                    <Table.Td className="pages-nowrap">{when(key.created_at)}</Table.Td>
                    <RowActions>
                      <Button variant="default" data-testid="key-toggle" disabled={change.isPending} onClick={() => change.mutate({ id: key.id, is_active: !key.is_active })}>
                        {key.is_active ? 'Deactivate' : 'Activate'}
                      </Button>
                      <Button
                        variant="subtle"
                        color="red"
                        data-testid="key-delete"
                        disabled={remove.isPending}
                        onClick={() => {
                          if (window.confirm(`Delete the key "${key.label}"? Its broker is released; orders already placed stay.`)) remove.mutate({ id: key.id });
                        }}
                      >
                        Delete
                      </Button>
                    </RowActions>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </DataTable>
          ) : null}
        </Panel>
      </div>
    </Page>
  );
};
