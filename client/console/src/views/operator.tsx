// The operator's console: the service (halt, live suspension), who trades live, active locks and
// running bots with the actions on them, the kill switch's latest alerts, the users (activate,
// deactivate, and one user's detail: live flags, locks, today's live orders, bot, with the
// actions on them), and the simulator and market data (a price, an outage, an instrument, OHLCV
// bars). Only operators see the page; the API refuses everyone else anyway.
import { Badge, Button, Group, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES, when } from '../format.ts';
import { DataTable, Empty, Hint, KeyValues, ModeBadge, Page, Panel, RowActions } from './page-kit.tsx';
import { MarketDataPanel, SimulatorPanel } from './operator-data.tsx';

const PAGE_SIZE = 20;
/** The users whose names the page knows without asking for each: the API's largest page. */
const KNOWN_USERS_SIZE = 100;

/** Everything an operator action can change is read again. */
const readAgain = () =>
  Promise.all([
    queryClient.invalidateQueries(trpc.admin.overview.pathFilter()),
    queryClient.invalidateQueries(trpc.admin.haltState.pathFilter()),
    queryClient.invalidateQueries(trpc.admin.listUsers.pathFilter()),
    queryClient.invalidateQueries(trpc.admin.userDetail.pathFilter()),
    queryClient.invalidateQueries({ queryKey: ['health'] }),
  ]);

/** Names by user id from what the page reads anyway: the newest users and the overview's named lists. */
const useKnownUsernames = (): Map<number, string> => {
  const users = useQuery(trpc.admin.listUsers.queryOptions({ page: 1, size: KNOWN_USERS_SIZE }, { staleTime: 60_000 }));
  const overview = useQuery(trpc.admin.overview.queryOptions());
  return useMemo(() => {
    const names = new Map<number, string>();
    for (const user of users.data?.items ?? []) names.set(user.id, user.username);
    for (const entry of [...(overview.data?.live_enabled ?? []), ...(overview.data?.active_locks ?? [])]) names.set(entry.user_id, entry.username);
    return names;
  }, [users.data, overview.data]);
};

/**
 * A user's name, for the lists whose rows carry only the user's id (running bots, alerts): from
 * the names the page knows, else the user's own detail (GET /api/admin/users/{user_id}); `user N`
 * only if neither can say.
 */
const useUsername = (userId: number | undefined): string => {
  const known = useKnownUsernames();
  const name = userId === undefined ? undefined : known.get(userId);
  const detail = useQuery(trpc.admin.userDetail.queryOptions({ user_id: userId ?? 1 }, { enabled: userId !== undefined && name === undefined, staleTime: 60_000 }));
  if (userId === undefined) return '';
  return name ?? detail.data?.username ?? (detail.isError ? `user ${userId}` : '…');
};

const Username = ({ userId }: { userId: number }) => <span data-testid="username-of">{useUsername(userId)}</span>;

const ServicePanel = () => {
  const halt = useQuery(trpc.admin.haltState.queryOptions());
  const overview = useQuery(trpc.admin.overview.queryOptions());
  const setHalt = useMutation(trpc.admin.halt.mutationOptions({ onSettled: readAgain }));
  const suspend = useMutation(trpc.admin.suspendLive.mutationOptions({ onSettled: readAgain }));
  const halted = halt.data?.halted ?? false;
  const suspended = overview.data?.live_suspended ?? false;
  return (
    <Panel
      title="Service"
      testId="service-panel"
      aside={
        halt.data ? (
          <Badge component="span" variant="light" color={halted ? 'red' : 'green'}>
            {halted ? 'halted' : 'running'}
          </Badge>
        ) : null
      }
    >
      <Stack gap="sm">
        <KeyValues
          rows={[
            ['Halt', halt.data ? (halted ? `halted since ${when(halt.data.updated_at ?? '')}` : 'running') : '…', 'halt-state'],
            ['Live orders', overview.data ? (suspended ? 'suspended (every live order answers 503)' : 'allowed') : '…', 'live-suspension'],
          ]}
        />
        <Hint>A halt stops orders and most routes with 503 SERVICE_HALTED for every user; this page and sign-in keep working so it can be lifted here.</Hint>
        <div className="pages-actions">
          <Button color={halted ? undefined : 'red'} data-testid="halt-toggle" disabled={!halt.data || setHalt.isPending} onClick={() => setHalt.mutate({ halted: !halted })}>
            {halted ? 'Lift the halt' : 'Halt the service'}
          </Button>
          <Button variant="default" data-testid="suspend-toggle" disabled={!overview.data || suspend.isPending} onClick={() => suspend.mutate({ suspended: !suspended })}>
            {suspended ? 'Allow live orders' : 'Suspend live orders'}
          </Button>
        </div>
        <ErrorNotice error={setHalt.error ?? suspend.error ?? halt.error ?? overview.error} />
        <DoneNotice text={setHalt.data ? (setHalt.data.halted ? 'The service is halted.' : 'The halt is lifted.') : undefined} />
      </Stack>
    </Panel>
  );
};

const TradingPanel = () => {
  const overview = useQuery(trpc.admin.overview.queryOptions());
  const clearLock = useMutation(trpc.admin.clearLock.mutationOptions({ onSettled: readAgain }));
  const disableLive = useMutation(trpc.admin.disableLive.mutationOptions({ onSettled: readAgain }));
  const stopBot = useMutation(trpc.admin.stopUserBot.mutationOptions({ onSettled: readAgain }));
  const data = overview.data;
  const clearedFor = useUsername(clearLock.data?.user_id);
  return (
    <Panel title="Live trading, locks and bots" testId="trading-panel" wide>
      <ErrorNotice error={clearLock.error ?? disableLive.error ?? stopBot.error ?? overview.error} />
      <DoneNotice text={clearLock.data ? `Lock of ${clearedFor} (${ASSET_CLASS_NAMES[clearLock.data.asset_class]}) cleared.` : undefined} />
      <div className="pages-grid pages-grid-tables">
        <div>
          <Title order={3}>Active locks</Title>
          {data && data.active_locks.length === 0 ? <Empty testId="no-locks">No account is locked.</Empty> : null}
          {data && data.active_locks.length > 0 ? (
            <DataTable label="Active locks" testId="locks">
              <Table.Tbody>
                {data.active_locks.map((lock) => (
                  <Table.Tr key={`${lock.user_id}:${lock.asset_class}`} data-testid="lock-row">
                    <Table.Td fw={500}>{lock.username}</Table.Td>
                    <Table.Td className="pages-nowrap">{ASSET_CLASS_NAMES[lock.asset_class]}</Table.Td>
                    <Table.Td className="pages-nowrap loss">until {when(lock.locked_until)}</Table.Td>
                    <Table.Td>{lock.reason}</Table.Td>
                    <RowActions>
                      <Button variant="default" data-testid="clear-lock" disabled={clearLock.isPending} onClick={() => clearLock.mutate({ user_id: lock.user_id, asset_class: lock.asset_class })}>
                        Clear lock
                      </Button>
                    </RowActions>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </DataTable>
          ) : null}
        </div>
        <div>
          <Title order={3}>Live enabled</Title>
          {data && data.live_enabled.length === 0 ? <Empty>Nobody trades live.</Empty> : null}
          {data && data.live_enabled.length > 0 ? (
            <DataTable label="Live enabled" testId="live-users">
              <Table.Tbody>
                {data.live_enabled.map((entry) => (
                  <Table.Tr key={`${entry.user_id}:${entry.asset_class}`}>
                    <Table.Td fw={500}>{entry.username}</Table.Td>
                    <Table.Td className="pages-nowrap">{ASSET_CLASS_NAMES[entry.asset_class]}</Table.Td>
                    <Table.Td>{entry.first_live_order_at ? `first live order ${when(entry.first_live_order_at)}` : 'no live order yet'}</Table.Td>
                    <Table.Td className="pages-nowrap">{data.live_orders_today.find((count) => count.user_id === entry.user_id && count.asset_class === entry.asset_class)?.count ?? 0} live orders today</Table.Td>
                    <RowActions>
                      <Button variant="default" disabled={disableLive.isPending} onClick={() => disableLive.mutate({ user_id: entry.user_id, asset_class: entry.asset_class })}>
                        Disable live
                      </Button>
                    </RowActions>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </DataTable>
          ) : null}
        </div>
        <div>
          <Title order={3}>Running bots</Title>
          {data && data.running_bots.length === 0 ? <Empty>No bot runs.</Empty> : null}
          {data && data.running_bots.length > 0 ? (
            <DataTable label="Running bots" testId="bots">
              <Table.Tbody>
                {data.running_bots.map((bot) => (
                  <Table.Tr key={bot.user_id}>
                    <Table.Td fw={500}>
                      <Username userId={bot.user_id} />
                    </Table.Td>
                    <Table.Td className="pages-nowrap">{ASSET_CLASS_NAMES[bot.asset_class]}</Table.Td>
                    <Table.Td>{bot.strategy_name}</Table.Td>
                    <Table.Td>
                      <ModeBadge live={bot.live_mode} testId="bot-mode" />
                    </Table.Td>
                    <Table.Td className="pages-nowrap">since {when(bot.started_at)}</Table.Td>
                    <RowActions>
                      <Button variant="default" disabled={stopBot.isPending} onClick={() => stopBot.mutate({ user_id: bot.user_id })}>
                        Stop bot
                      </Button>
                    </RowActions>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </DataTable>
          ) : null}
        </div>
      </div>
    </Panel>
  );
};

const UserDetail = ({ userId }: { userId: number }) => {
  const detail = useQuery(trpc.admin.userDetail.queryOptions({ user_id: userId }));
  const clearLock = useMutation(trpc.admin.clearLock.mutationOptions({ onSettled: readAgain }));
  const disableLive = useMutation(trpc.admin.disableLive.mutationOptions({ onSettled: readAgain }));
  const stopBot = useMutation(trpc.admin.stopUserBot.mutationOptions({ onSettled: readAgain }));
  const data = detail.data;
  return (
    <Panel
      order={3}
      testId="user-detail"
      title={data ? `${data.username} (${data.email}, ${data.role}, ${data.is_active ? 'active' : 'deactivated'})` : `User ${userId}`}
    >
      <ErrorNotice error={detail.error ?? clearLock.error ?? disableLive.error ?? stopBot.error} />
      {data ? (
        <Stack gap="xs">
          <DataTable label={`Live trading of ${data.username}`}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Asset class</Table.Th>
                <Table.Th>Live</Table.Th>
                <Table.Th>Lock</Table.Th>
                <Table.Th className="pages-num">Live orders today</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {ASSET_CLASSES.map((assetClass) => {
                const live = data.live[assetClass];
                return (
                  <Table.Tr key={assetClass} data-testid={`detail-${assetClass}`}>
                    <Table.Td className="pages-nowrap">{ASSET_CLASS_NAMES[assetClass]}</Table.Td>
                    <Table.Td className={live.live_enabled ? undefined : 'pages-nowrap'}>{live.live_enabled ? `enabled${live.first_live_order_at ? `, first order ${when(live.first_live_order_at)}` : ''}` : 'paper only'}</Table.Td>
                    <Table.Td data-testid="detail-lock" className={live.locked_until ? 'loss' : undefined}>
                      {live.locked_until ? `until ${when(live.locked_until)}${live.lock_reason ? `: ${live.lock_reason}` : ''}` : 'none'}
                    </Table.Td>
                    <Table.Td className="pages-num">
                      {live.live_orders_today} / {live.daily_limit}
                    </Table.Td>
                    <RowActions>
                      {live.locked_until ? (
                        <Button variant="default" disabled={clearLock.isPending} onClick={() => clearLock.mutate({ user_id: userId, asset_class: assetClass })}>
                          Clear lock
                        </Button>
                      ) : null}
                      {live.live_enabled ? (
                        <Button variant="default" disabled={disableLive.isPending} onClick={() => disableLive.mutate({ user_id: userId, asset_class: assetClass })}>
                          Disable live
                        </Button>
                      ) : null}
                    </RowActions>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </DataTable>
          <Group gap="xs" data-testid="detail-bot">
            <Text size="sm">
              Bot:{' '}
              {data.bot?.is_running
                ? `running ${data.bot.strategy_name} on ${data.bot.symbols.join(', ')} (${data.bot.live_mode ? 'live' : 'paper'})`
                : data.bot
                  ? `stopped${data.bot.stopped_by ? ` by ${data.bot.stopped_by}` : ''}`
                  : 'never started'}
            </Text>
            {data.bot?.is_running ? (
              <Button variant="default" disabled={stopBot.isPending} onClick={() => stopBot.mutate({ user_id: userId })}>
                Stop bot
              </Button>
            ) : null}
          </Group>
        </Stack>
      ) : null}
    </Panel>
  );
};

const AlertsPanel = () => {
  const alerts = useQuery(trpc.admin.alerts.queryOptions({ page: 1, size: 20 }));
  return (
    <Panel title="Latest critical alerts" testId="alerts-panel" wide>
      <ErrorNotice error={alerts.error} />
      {alerts.data && alerts.data.items.length === 0 ? <Empty>No alert yet.</Empty> : null}
      {alerts.data && alerts.data.items.length > 0 ? (
        <DataTable label="Latest critical alerts">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>At</Table.Th>
              <Table.Th>User</Table.Th>
              <Table.Th>Asset class</Table.Th>
              <Table.Th>Kind</Table.Th>
              <Table.Th>Alert</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {alerts.data.items.map((alert) => (
              <Table.Tr key={alert.id} data-testid="alert-row">
                <Table.Td className="pages-nowrap">{when(alert.at)}</Table.Td>
                <Table.Td fw={500}>
                  <Username userId={alert.user_id} />
                </Table.Td>
                <Table.Td className="pages-nowrap">{ASSET_CLASS_NAMES[alert.asset_class]}</Table.Td>
                <Table.Td>
                  <Badge component="span" variant="light" color={alert.kind === 'kill_switch_lock' ? 'red' : 'yellow'} data-testid="alert-kind">
                    {alert.kind === 'kill_switch_lock' ? 'lock' : 'warning'}
                  </Badge>
                </Table.Td>
                <Table.Td>{alert.title}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </DataTable>
      ) : null}
    </Panel>
  );
};

const UsersPanel = () => {
  const [page, setPage] = useState(1);
  const [shown, setShown] = useState<number>();
  const users = useQuery(trpc.admin.listUsers.queryOptions({ page, size: PAGE_SIZE }));
  const activate = useMutation(trpc.admin.activateUser.mutationOptions({ onSettled: readAgain }));
  const deactivate = useMutation(trpc.admin.deactivateUser.mutationOptions({ onSettled: readAgain }));
  const pages = users.data ? Math.max(1, Math.ceil(users.data.total / PAGE_SIZE)) : 1;
  return (
    <Panel title="Users" testId="users-panel" wide aside={users.data ? <Hint>{users.data.total} users</Hint> : null}>
      <Stack gap="sm">
        <ErrorNotice error={activate.error ?? deactivate.error ?? users.error} />
        <DataTable label="Users" testId="users">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>User</Table.Th>
              <Table.Th>E-mail</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Active</Table.Th>
              <Table.Th>Since</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {users.data?.items.map((user) => (
              <Table.Tr key={user.id} data-testid="user-row">
                <Table.Td fw={500}>{user.username}</Table.Td>
                <Table.Td>{user.email}</Table.Td>
                <Table.Td>{user.role}</Table.Td>
                <Table.Td>
                  <Badge component="span" variant="light" color={user.is_active ? 'green' : 'gray'} size="sm">
                    {user.is_active ? 'yes' : 'no'}
                  </Badge>
                </Table.Td>
                <Table.Td className="pages-nowrap">{when(user.created_at)}</Table.Td>
                <RowActions>
                  <Button variant={shown === user.id ? 'light' : 'default'} data-testid="user-details" aria-expanded={shown === user.id} onClick={() => setShown(shown === user.id ? undefined : user.id)}>
                    {shown === user.id ? 'Hide' : 'Details'}
                  </Button>
                  {user.is_active ? (
                    <Button variant="subtle" color="red" disabled={deactivate.isPending} onClick={() => deactivate.mutate({ user_id: user.id })}>
                      Deactivate
                    </Button>
                  ) : (
                    <Button variant="subtle" disabled={activate.isPending} onClick={() => activate.mutate({ user_id: user.id })}>
                      Activate
                    </Button>
                  )}
                </RowActions>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </DataTable>
        {shown === undefined ? null : <UserDetail userId={shown} />}
        <Group gap="xs" className="pager">
          <Button variant="default" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <Text size="sm" className="num">
            page {page} of {pages}
          </Text>
          <Button variant="default" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </Group>
      </Stack>
    </Panel>
  );
};

export const Operator = () => (
  <Page title="Operator">
    <div className="pages-grid">
      <ServicePanel />
      <SimulatorPanel />
      <MarketDataPanel />
      <TradingPanel />
      <AlertsPanel />
      <UsersPanel />
    </div>
  </Page>
);
