// The settings page's notification channels: add one (the kind's own fields; a webhook's signing
// secret shown this once), the channels with their events, state, failures and the reason the
// service disabled one, and for each: events, enable or disable, send a test, delete.
import { Button, Checkbox, Group, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { TARGET_FIELDS, ZNotificationChannelCreate, ZNotificationEvent, ZNotificationKind, type TNotificationChannel, type TNotificationEvent, type TNotificationKind } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldText, FieldError, type TFieldErrors } from '../forms.tsx';
import { when } from '../format.ts';
import { ChoiceField, ColumnHeads, DataTable, Empty, Field, Hint, Panel, RowActions, ShownOnce } from './page-kit.tsx';

const KIND_NAMES: Record<TNotificationKind, string> = { webhook: 'Webhook (signed JSON)', slack: 'Slack', discord: 'Discord', telegram: 'Telegram', email: 'E-mail' };

const FIELD_LABELS: Record<string, string> = {
  url: 'Webhook URL',
  bot_token: 'Bot token',
  chat_id: 'Chat id or @channel',
  address: 'E-mail address',
};

const EVENT_NAMES: Record<TNotificationEvent, string> = {
  fill: 'fills',
  rejection: 'rejections',
  kill_switch_alert: 'kill-switch alert',
  kill_switch_lock: 'kill-switch lock',
  live_enabled: 'live enabled',
  bot_halted: 'bot halted',
  analysis_done: 'analysis done',
};

const asEvents = (values: string[]): TNotificationEvent[] => values.filter((value): value is TNotificationEvent => ZNotificationEvent.safeParse(value).success);

const EventChoice = ({ value, onChange, label }: { value: TNotificationEvent[]; onChange: (next: TNotificationEvent[]) => void; label?: string }) => (
  <Checkbox.Group label={label} value={value} onChange={(values) => onChange(asEvents(values))}>
    <Group gap="md" mt={label ? 4 : 0}>
      {ZNotificationEvent.options.map((event) => (
        <Checkbox key={event} value={event} label={EVENT_NAMES[event]} />
      ))}
    </Group>
  </Checkbox.Group>
);

const stateOf = (channel: TNotificationChannel): string => {
  if (channel.enabled) return channel.failure_count > 0 ? `on, ${channel.failure_count} failed in a row` : 'on';
  return channel.disabled_reason ?? 'off';
};

const lastDelivery = (channel: TNotificationChannel): string =>
  channel.last_delivery_at ? `${when(channel.last_delivery_at)} (${channel.last_delivery_ok ? 'delivered' : 'failed'})` : 'never';

/** One channel's row: its events can be changed in place. */
const ChannelRow = ({ channel, onChanged }: { channel: TNotificationChannel; onChanged: () => void }) => {
  const update = useMutation(trpc.notifications.update.mutationOptions({ onSettled: onChanged }));
  const remove = useMutation(trpc.notifications.remove.mutationOptions({ onSettled: onChanged }));
  const test = useMutation(trpc.notifications.test.mutationOptions({ onSettled: onChanged }));
  const busy = update.isPending || remove.isPending || test.isPending;
  return (
    <Table.Tr data-testid="notification-row">
      <Table.Td>{channel.name}</Table.Td>
      <Table.Td>{KIND_NAMES[channel.kind]}</Table.Td>
      <Table.Td>
        <EventChoice value={channel.events} onChange={(events) => events.length > 0 && update.mutate({ id: channel.id, events })} />
      </Table.Td>
      <Table.Td data-testid="notification-state">{stateOf(channel)}</Table.Td>
      <Table.Td className="pages-nowrap">
        {lastDelivery(channel)}
        {test.data ? <Text size="xs" data-testid="notification-test-result">{test.data.delivered ? 'Test delivered' : `Test failed: ${test.data.error ?? 'unknown'}`}</Text> : null}
        <ErrorNotice error={update.error ?? remove.error ?? test.error} />
      </Table.Td>
      <RowActions>
        <Button variant="default" disabled={busy} onClick={() => test.mutate({ id: channel.id })} data-testid="test-notification">
          Test
        </Button>
        <Button variant="default" disabled={busy} onClick={() => update.mutate({ id: channel.id, enabled: !channel.enabled })} data-testid="toggle-notification">
          {channel.enabled ? 'Disable' : 'Enable'}
        </Button>
        <Button variant="default" color="red" disabled={busy} onClick={() => remove.mutate({ id: channel.id })} data-testid="delete-notification">
          Delete
        </Button>
      </RowActions>
    </Table.Tr>
  );
};

export const Notifications = () => {
  const readAgain = () => queryClient.invalidateQueries(trpc.notifications.list.pathFilter());
  const channels = useQuery(trpc.notifications.list.queryOptions());
  const create = useMutation(trpc.notifications.create.mutationOptions({ onSettled: readAgain }));
  const [kind, setKind] = useState<TNotificationKind>('webhook');
  const [events, setEvents] = useState<TNotificationEvent[]>(['fill', 'kill_switch_lock']);
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const config = Object.fromEntries(TARGET_FIELDS[kind].map((field) => [field, fieldText(form, `config.${field}`)]));
    const request = checkedRequest(ZNotificationChannelCreate, { name: fieldText(form, 'name'), kind, config, events }, setFieldErrors);
    if (request) create.mutate(request);
  };

  return (
    <Panel title="Notifications" testId="notifications">
      <Stack gap="xs">
        <Hint>Channels that tell you of your fills, rejections, the kill switch, live trading enabled, a halted bot and finished analyses. Events within 5 s come as one message. A channel that fails 10 times in a row is disabled; the reason shows below.</Hint>
        <form className="pages-form" onSubmit={submit} noValidate data-testid="notification-form">
          <Field name="name" label="Name" errors={fieldErrors} />
          <ChoiceField name="kind" label="Kind" choices={ZNotificationKind.options.map((value) => ({ value, label: KIND_NAMES[value] }))} value={kind} onChange={(next) => setKind(ZNotificationKind.parse(next))} />
          {TARGET_FIELDS[kind].map((field) => (
            <Field key={`${kind}-${field}`} name={`config.${field}`} label={FIELD_LABELS[field] ?? field} errors={fieldErrors} type={field === 'bot_token' ? 'password' : 'text'} />
          ))}
          <EventChoice label="Events" value={events} onChange={setEvents} />
          <FieldError errors={fieldErrors} name="events" />
          <div className="pages-actions">
            <Button type="submit" loading={create.isPending}>
              Add channel
            </Button>
          </div>
        </form>
        {create.data?.signing_secret ? (
<ShownOnce
            testId="notification-secret"
            what="the signing secret"
            note={'Each delivery carries X-Signature: sha256=HMAC-SHA256(secret, "timestamp.body").'}
            value={create.data.signing_secret}
          />
        ) : null}
        <ErrorNotice error={create.error ?? channels.error} />
        {channels.data && channels.data.items.length === 0 ? <Empty testId="no-notifications">No notification channels.</Empty> : null}
        {channels.data && channels.data.items.length > 0 ? (
          <DataTable label="Notification channels">
            <ColumnHeads columns={['Name', 'Kind', 'Events', 'State', 'Last delivery']} />
            <Table.Tbody>
              {channels.data.items.map((channel) => (
                <ChannelRow key={channel.id} channel={channel} onChanged={() => void readAgain()} />
              ))}
            </Table.Tbody>
          </DataTable>
        ) : null}
      </Stack>
    </Panel>
  );
};
