// The settings page's signal webhooks: make one (its URL shown this once, to copy), the hooks in
// force with a rotate and a remove for each, a TradingView alert message to copy, and the recent
// signals with what became of each.
import { Badge, Button, Code, CopyButton, Group, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZSignalWebhookCreate, type TAssetClass, type TSignalWebhookCreated, type TSignalOutcome } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { checkedRequest, FieldError, fieldText, type TFieldErrors } from '../forms.tsx';
import { when } from '../format.ts';
import { ModeBadge } from '../pickers.tsx';
import { AssetClassField, ChoiceField, ColumnHeads, DataTable, Empty, Field, Hint, Panel, RowActions } from './page-kit.tsx';

/** Signals refresh this often while the page is open: their orders are placed after the hook's answer. */
const SIGNALS_REFRESH_MS = 5_000;

const OUTCOME_COLORS: Record<TSignalOutcome, string> = { pending: 'gray', accepted: 'green', refused: 'red', invalid: 'orange' };

/**
 * The alert message for a TradingView strategy: its placeholders fill the order's side and size,
 * the alert's id and time (a retried alert keeps both, so it makes one order).
 */
const alertTemplate = (withPassphrase: boolean) =>
  [
    '{',
    '  "symbol": "{{ticker}}",',
    '  "side": "{{strategy.order.action}}",',
    '  "qty": {{strategy.order.contracts}},',
    '  "order_type": "market",',
    '  "alert_id": "{{strategy.order.id}}-{{timenow}}",',
    `  "timestamp": "{{timenow}}"${withPassphrase ? ',' : ''}`,
    ...(withPassphrase ? ['  "passphrase": "<your passphrase>"'] : []),
    '}',
  ].join('\n');

const Copyable = ({ value, label, testId }: { value: string; label: string; testId?: string }) => (
  <Stack gap={4} data-testid={testId}>
    <Code block>{value}</Code>
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button variant="default" size="xs" onClick={copy} w="fit-content">
          {copied ? 'Copied' : label}
        </Button>
      )}
    </CopyButton>
  </Stack>
);

/** A hook's URL as made or rotated: shown this once. */
const NewHookUrl = ({ hook }: { hook: TSignalWebhookCreated }) => (
  <Stack gap={4} data-testid="webhook-url">
    <Text size="sm">Copy the URL of “{hook.name}” now: its token is not shown again.</Text>
    <Copyable value={`${window.location.origin}${hook.url}`} label="Copy URL" />
  </Stack>
);

const RecentSignals = () => {
  const signals = useQuery({ ...trpc.signals.list.queryOptions({ page: 1, size: 20 }), refetchInterval: SIGNALS_REFRESH_MS });
  if (signals.error) return <ErrorNotice error={signals.error} />;
  if (!signals.data) return null;
  if (signals.data.items.length === 0) return <Empty testId="no-signals">No signals yet.</Empty>;
  return (
    <DataTable label="Recent signals" testId="signals">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Received</Table.Th>
          <Table.Th>Hook</Table.Th>
          <Table.Th>Signal</Table.Th>
          <Table.Th>Outcome</Table.Th>
          <Table.Th>Order or reason</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {signals.data.items.map((signal) => (
          <Table.Tr key={signal.id} data-testid="signal-row">
            <Table.Td className="pages-nowrap">{when(signal.received_at)}</Table.Td>
            <Table.Td>{signal.webhook_name}</Table.Td>
            <Table.Td>{[signal.side, signal.qty ?? (signal.qty_pct === null ? null : `${signal.qty_pct * 100} %`), signal.symbol, signal.order_type].filter((part) => part !== null).join(' ')}</Table.Td>
            <Table.Td>
              <Badge variant="light" color={OUTCOME_COLORS[signal.outcome]} size="sm" radius="sm">
                {signal.outcome}
              </Badge>
            </Table.Td>
            <Table.Td>{signal.order_id ? <Code>{signal.order_id}</Code> : signal.error_code ? `${signal.error_code}: ${signal.error_message ?? ''}` : null}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </DataTable>
  );
};

export const Webhooks = () => {
  const readAgain = () => queryClient.invalidateQueries(trpc.signals.webhooks.pathFilter());
  const hooks = useQuery(trpc.signals.webhooks.queryOptions());
  const create = useMutation(trpc.signals.createWebhook.mutationOptions({ onSettled: readAgain }));
  const rotate = useMutation(trpc.signals.rotateWebhook.mutationOptions({ onSettled: readAgain }));
  const remove = useMutation(trpc.signals.removeWebhook.mutationOptions({ onSettled: readAgain }));
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  // The URL of the hook made or rotated last: each answer replaces the other's.
  const [shown, setShown] = useState<TSignalWebhookCreated | undefined>();

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const lag = fieldText(form, 'max_lag_sec');
    const passphrase = fieldText(form, 'passphrase');
    const request = checkedRequest(
      ZSignalWebhookCreate,
      { name: fieldText(form, 'name'), asset_class: assetClass, mode: fieldText(form, 'mode'), max_lag_sec: lag ? Number(lag) : undefined, passphrase: passphrase || undefined },
      setFieldErrors,
    );
    if (request) create.mutate(request, { onSuccess: setShown });
  };

  return (
    <Panel title="Signal webhooks" testId="webhooks">
      <Stack gap="xs">
        <Hint>For TradingView-style alerts: each call of a hook’s URL places its order through the same checks as any order, on the hook’s account. Anyone with the URL can trade on it: keep it secret, rotate it if it leaks.</Hint>
        <form className="pages-form" onSubmit={submit} noValidate data-testid="webhook-form">
          <Field name="name" label="Name" errors={fieldErrors} />
          <AssetClassField id="webhook-asset-class" value={assetClass} onChange={setAssetClass} />
          <ChoiceField name="mode" label="Account" choices={[{ value: 'paper', label: 'paper' }, { value: 'live', label: 'live' }]} defaultValue="paper" />
          <Field name="max_lag_sec" label="Max alert age (seconds)" type="number" placeholder="120" min={1} max={86400} step={1} inputMode="numeric" errors={fieldErrors} />
          <Field name="passphrase" label="Passphrase (optional)" type="password" autoComplete="new-password" errors={fieldErrors} />
          <FieldError errors={fieldErrors} name="asset_class" />
          <div className="pages-actions">
            <Button type="submit" loading={create.isPending}>
              Create webhook
            </Button>
          </div>
        </form>
        {shown ? <NewHookUrl hook={shown} /> : null}
        <ErrorNotice error={create.error ?? rotate.error ?? remove.error ?? hooks.error} />
        {hooks.data && hooks.data.items.length === 0 ? <Empty testId="no-webhooks">No signal webhooks.</Empty> : null}
        {hooks.data && hooks.data.items.length > 0 ? (
          <DataTable label="Signal webhooks">
            <ColumnHeads columns={['Name', 'Token', 'Account', 'Max age', 'Passphrase', 'Created']} />
            <Table.Tbody>
              {hooks.data.items.map((hook) => (
                <Table.Tr key={hook.id} data-testid="webhook-row">
                  <Table.Td>{hook.name}</Table.Td>
                  <Table.Td>
                    <Code>{hook.token_prefix}…</Code>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      {hook.asset_class}
                      <ModeBadge mode={hook.mode} />
                    </Group>
                  </Table.Td>
                  <Table.Td>{hook.max_lag_sec} s</Table.Td>
                  <Table.Td>{hook.has_passphrase ? 'yes' : 'no'}</Table.Td>
                  <Table.Td className="pages-nowrap">{when(hook.created_at)}</Table.Td>
                  <RowActions>
                    <Button variant="default" data-testid="rotate-webhook" disabled={rotate.isPending} onClick={() => rotate.mutate({ id: hook.id }, { onSuccess: setShown })}>
                      Rotate
                    </Button>
                    <Button variant="default" color="red" data-testid="remove-webhook" disabled={remove.isPending} onClick={() => remove.mutate({ id: hook.id })}>
                      Delete
                    </Button>
                  </RowActions>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </DataTable>
        ) : null}
        <Text size="sm" fw={500}>
          TradingView alert message
        </Text>
        <Hint>Paste it as the alert’s message (Webhook URL: the hook’s). Instead of qty, qty_pct sizes by a fraction: of buying power for a buy, of the held quantity for a sell.</Hint>
        <Copyable value={alertTemplate(hooks.data?.items.some((hook) => hook.has_passphrase) ?? false)} label="Copy message" testId="webhook-template" />
        <Text size="sm" fw={500}>
          Recent signals
        </Text>
        <RecentSignals />
      </Stack>
    </Panel>
  );
};
