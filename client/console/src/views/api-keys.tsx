// The settings page's personal API keys: create one with its scopes (its secret shown this once,
// to copy), the keys in force with their scopes and last use, and a revoke for each.
import { Button, Checkbox, Code, Group, Stack, Table } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZApiKeyCreate, ZApiKeyScope, type TApiKeyScope } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { checkedRequest, FieldError, fieldText, type TFieldErrors } from '../forms.tsx';
import { when } from '../format.ts';
import { ColumnHeads, DataTable, Empty, Field, Hint, Panel, RowActions, ShownOnce } from './page-kit.tsx';

const SCOPE_HINTS: Record<TApiKeyScope, string> = {
  read: 'read your data and open the channels',
  trade: 'paper orders and the bot',
  live: 'live orders, with trade',
  backtest: 'run backtests',
  analysis: 'ask for analyses',
};

export const ApiKeys = () => {
  const readAgain = () => queryClient.invalidateQueries(trpc.auth.apiKeys.pathFilter());
  const keys = useQuery(trpc.auth.apiKeys.queryOptions());
  const create = useMutation(trpc.auth.createApiKey.mutationOptions({ onSettled: readAgain }));
  const revoke = useMutation(trpc.auth.revokeApiKey.mutationOptions({ onSettled: readAgain }));
  const [scopes, setScopes] = useState<TApiKeyScope[]>(['read']);
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const expires = fieldText(form, 'expires_on');
    const request = checkedRequest(ZApiKeyCreate, { name: fieldText(form, 'name'), scopes, expires_at: expires ? `${expires}T00:00:00Z` : undefined }, setFieldErrors);
    if (request) create.mutate(request);
  };

  return (
    <Panel title="API keys" testId="api-keys">
      <Stack gap="xs">
        <Hint>For scripts and other programs: sent as “Authorization: Bearer tsk_…”, and for AI assistants through the MCP server (/mcp, or npm run mcp). A key reaches only what its scopes allow, never this page, the exchange keys or the password.</Hint>
        <form className="pages-form" onSubmit={submit} noValidate data-testid="api-key-form">
          <Field name="name" label="Name" errors={fieldErrors} />
          <Checkbox.Group label="Scopes" value={scopes} onChange={(values) => setScopes(values.filter((value): value is TApiKeyScope => ZApiKeyScope.safeParse(value).success))}>
            <Group gap="md" mt={4}>
              {ZApiKeyScope.options.map((scope) => (
                <Checkbox key={scope} value={scope} label={scope} title={SCOPE_HINTS[scope]} />
              ))}
            </Group>
          </Checkbox.Group>
          <FieldError errors={fieldErrors} name="scopes" />
          <Field name="expires_on" label="Expires on (optional)" type="date" errors={fieldErrors} />
          <FieldError errors={fieldErrors} name="expires_at" />
          <div className="pages-actions">
            <Button type="submit" loading={create.isPending}>
              Create key
            </Button>
          </div>
        </form>
        {create.data ? (
<ShownOnce testId="api-key-secret" what="the key" value={create.data.key} />
        ) : null}
        <ErrorNotice error={create.error ?? revoke.error ?? keys.error} />
        {keys.data && keys.data.items.length === 0 ? <Empty testId="no-api-keys">No API keys.</Empty> : null}
        {keys.data && keys.data.items.length > 0 ? (
          <DataTable label="API keys">
            <ColumnHeads columns={['Name', 'Key', 'Scopes', 'Last used', 'Expires']} />
            <Table.Tbody>
              {keys.data.items.map((key) => (
                <Table.Tr key={key.id} data-testid="api-key-row">
                  <Table.Td>{key.name}</Table.Td>
                  <Table.Td>
                    <Code>{key.prefix}…</Code>
                  </Table.Td>
                  <Table.Td>{key.scopes.join(', ')}</Table.Td>
                  <Table.Td className="pages-nowrap">{key.last_used_at ? when(key.last_used_at) : 'never'}</Table.Td>
                  <Table.Td className="pages-nowrap">{key.expires_at ? when(key.expires_at) : 'never'}</Table.Td>
                  <RowActions>
                    <Button variant="default" color="red" data-testid="revoke-api-key" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: key.id })}>
                      Revoke
                    </Button>
                  </RowActions>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </DataTable>
        ) : null}
      </Stack>
    </Panel>
  );
};
