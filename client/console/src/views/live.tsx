// Live trading: where each asset class stands (live flag, lock, today's live orders against the
// limit), what still blocks live orders on this service (its flags), and the promotion wizard:
// readiness → a confirm token (by e-mail, or to the service log) → enable. Then the kill switch's
// lines: the day's P&L of each account it watches (paper, and live once the asset class is
// enabled) against the −4 % alert and the −5 % lock.
import { Alert, Badge, Button, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { errorCodeOf, ZLiveEnableRequest, type TAssetClass, type TFeatureFlags, type TTradingMode } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldText, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES, money, percent, percentDirection, pnlPercent, when } from '../format.ts';
import { AssetClassField, DataTable, Field, Hint, Page, Panel } from './page-kit.tsx';

/** The kill switch's lines (DESIGN "Kill switch") as fractions, when an account's metadata does not say them. */
const ALERT_LINE = -0.04;
const LOCK_LINE = -0.05;

const readLiveAgain = () => queryClient.invalidateQueries(trpc.live.status.pathFilter());

/** What the service's own settings still say against live orders, whatever the user does. */
const blockersOf = (flags: TFeatureFlags | undefined): string[] => {
  if (!flags) return [];
  const blockers: string[] = [];
  if (!flags.FEATURE_EQUITY_LIVE) blockers.push('FEATURE_EQUITY_LIVE is off on this service');
  if (!flags.ALLOW_LIVE) blockers.push('ALLOW_LIVE is not set on this host');
  return blockers;
};

const StatusTable = () => {
  // Read again on every visit: a lock can come from another tab's fill or the minute's sweep.
  const status = useQuery(trpc.live.status.queryOptions(undefined, { refetchOnMount: 'always' }));
  return (
    <Panel title="Asset classes" testId="live-status-panel">
      <ErrorNotice error={status.error} />
      <DataTable label="Live trading by asset class" testId="live-status">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Asset class</Table.Th>
            <Table.Th>Live</Table.Th>
            <Table.Th>Lock</Table.Th>
            <Table.Th className="pages-num">Live orders today</Table.Th>
            <Table.Th>First live order</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {status.data
            ? ASSET_CLASSES.map((assetClass) => {
                const row = status.data[assetClass];
                return (
                  <Table.Tr key={assetClass} data-testid={`live-${assetClass}`}>
                    <Table.Th scope="row">{ASSET_CLASS_NAMES[assetClass]}</Table.Th>
                    <Table.Td data-testid="live-enabled">
                      <Badge component="span" variant="light" color={row.live_enabled ? 'red' : 'blue'} size="sm">
                        {row.live_enabled ? 'enabled' : 'paper only'}
                      </Badge>
                    </Table.Td>
                    <Table.Td data-testid="lock" className={row.locked_until ? 'loss' : undefined}>
                      {row.locked_until ? `locked until ${when(row.locked_until)}` : 'none'}
                    </Table.Td>
                    <Table.Td className="pages-num">
                      {row.live_orders_today} / {row.daily_limit}
                    </Table.Td>
                    <Table.Td className="pages-nowrap">{row.first_live_order_at ? when(row.first_live_order_at) : '–'}</Table.Td>
                  </Table.Tr>
                );
              })
            : null}
        </Table.Tbody>
      </DataTable>
    </Panel>
  );
};

const PromotionWizard = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const readiness = useMutation(trpc.live.readiness.mutationOptions());
  const issue = useMutation(trpc.live.issueConfirm.mutationOptions());
  const enable = useMutation(trpc.live.enable.mutationOptions({ onSettled: readLiveAgain }));
  const ready = readiness.data?.ok === true && readiness.data.asset_class === assetClass;
  const issued = issue.data?.asset_class === assetClass ? issue.data : undefined;

  const choose = (next: TAssetClass) => {
    setAssetClass(next);
    readiness.reset();
    issue.reset();
    enable.reset();
  };
  const submitToken = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const request = checkedRequest(ZLiveEnableRequest, { confirm_token: fieldText(form, 'confirm_token').trim(), botcheck_token: fieldText(form, 'botcheck_token').trim() || undefined }, setFieldErrors);
    if (request) enable.mutate(request);
  };

  return (
    <Panel title="Go live" testId="promotion">
      <Stack gap="sm">
        <AssetClassField value={assetClass} onChange={choose} />
        <ol className="pages-steps">
          <li>
            <Button variant="default" data-testid="check-readiness" loading={readiness.isPending} onClick={() => readiness.mutate({ asset_class: assetClass })}>
              Check my paper record
            </Button>
            {readiness.data && readiness.data.asset_class === assetClass ? (
              <Text size="sm" mt={4} className={readiness.data.ok ? 'gain' : undefined} data-testid="readiness">
                {readiness.data.ok ? 'Ready: ' : 'Not ready yet: '}
                {readiness.data.paper_days} of {readiness.data.required_days} days and {readiness.data.paper_trades} of {readiness.data.required_trades} filled paper orders.
                {readiness.data.reasons.length > 0 ? ` ${readiness.data.reasons.join('; ')}.` : ''}
              </Text>
            ) : null}
          </li>
          <li>
            <Button variant="default" data-testid="issue-token" disabled={!ready} loading={issue.isPending} onClick={() => issue.mutate({ asset_class: assetClass })}>
              Send me a confirm token
            </Button>
            {issued ? (
              <Text size="sm" mt={4} data-testid="token-issued">
                {issued.delivery === 'email' ? 'A token is on its way to your e-mail' : 'The token went to the service log (this service has no e-mail): ask its operator'}; it expires {when(issued.expires_at)}.
              </Text>
            ) : null}
          </li>
          <li>
            <form className="pages-form" onSubmit={submitToken} noValidate data-testid="enable-form">
              <Field name="confirm_token" label="Confirm token" autoComplete="one-time-code" errors={fieldErrors} />
              <Field name="botcheck_token" label="Bot check token (if this service asks for one)" errors={fieldErrors} />
              <div className="pages-actions">
                <Button type="submit" color="red" disabled={!issued} loading={enable.isPending}>
                  Enable live trading
                </Button>
              </div>
            </form>
          </li>
        </ol>
        <ErrorNotice error={readiness.error ?? issue.error ?? enable.error} />
        <DoneNotice text={enable.data ? `Live trading is enabled for ${ASSET_CLASS_NAMES[enable.data.asset_class]}.` : undefined} />
      </Stack>
    </Panel>
  );
};

/** Today's P&L of one account against the kill switch's lines, from the account's metadata (fractions). */
const RiskRow = ({ assetClass, mode }: { assetClass: TAssetClass; mode: TTradingMode }) => {
  const account = useQuery(trpc.equity.account.queryOptions({ asset_class: assetClass, mode }, { retry: false }));
  const testId = mode === 'paper' ? `risk-${assetClass}` : `risk-${assetClass}-live`;
  const name = `${ASSET_CLASS_NAMES[assetClass]} (${mode})`;
  // Live is enabled but its key is missing: say so, rather than leave the account out unseen.
  if (mode === 'live' && errorCodeOf(account.error) === 'BROKER_NOT_CONFIGURED')
    return (
      <Table.Tr data-testid={testId}>
        <Table.Th scope="row">{name}</Table.Th>
        <Table.Td colSpan={3} data-testid="risk-state" className="warning">
          no live key registered for this asset class (Exchange keys)
        </Table.Td>
      </Table.Tr>
    );
  if (!account.data) return null;
  const day = account.data.metadata as { day_start_equity?: string | null; day_pnl_pct?: number | string | null; day_pnl_alert_pct?: number; day_pnl_lock_pct?: number };
  const pct = day.day_pnl_pct === undefined || day.day_pnl_pct === null ? undefined : Number(day.day_pnl_pct);
  const lock = day.day_pnl_lock_pct ?? LOCK_LINE;
  const alert = day.day_pnl_alert_pct ?? ALERT_LINE;
  const state = pct === undefined ? 'no day-start snapshot yet (taken at the day\'s first fill)' : pct <= lock ? 'at the lock line' : pct <= alert ? 'past the alert line' : 'inside the lines';
  const stateClass = pct === undefined ? undefined : pct <= lock ? 'loss' : pct <= alert ? 'warning' : undefined;
  return (
    <Table.Tr data-testid={testId}>
      <Table.Th scope="row">{name}</Table.Th>
      <Table.Td className="pages-num">{day.day_start_equity ? money(Number(day.day_start_equity), account.data.currency) : '–'}</Table.Td>
      <Table.Td data-testid="day-pnl" className={`pages-num ${pct === undefined ? '' : percentDirection(pct)}`}>
        {pct === undefined ? '–' : pnlPercent(pct)}
      </Table.Td>
      <Table.Td data-testid="risk-state" className={stateClass}>
        {state}
      </Table.Td>
    </Table.Tr>
  );
};

export const Live = () => {
  // The live account is listed once the asset class is enabled for live, as on the overview: the
  // kill switch watches it as it watches the paper one, and only then can live orders move it.
  const status = useQuery(trpc.live.status.queryOptions());
  const flags = useQuery({ queryKey: ['flags'], queryFn: async () => (await fetch('/health/flags')).json() as Promise<TFeatureFlags> });
  const blockers = blockersOf(flags.data);
  return (
    <Page title="Live trading">
      {blockers.length > 0 ? (
        <Alert variant="light" color="yellow" title="Live orders are off on this service" data-testid="live-blockers">
          Live orders stay refused on this service until its operator changes: {blockers.join('; ')}.
        </Alert>
      ) : null}
      <StatusTable />
      <div className="pages-split">
        <PromotionWizard />
        <Panel title="Kill switch" testId="risk">
          <Stack gap="xs">
            <Hint>
              Each account's P&L since the UTC day's start: at {percent(ALERT_LINE)} the operators are alerted; at {percent(LOCK_LINE)} the asset class is locked for 24
              hours, its open entry orders canceled and the bot stopped. Only an operator clears a lock early.
            </Hint>
            <DataTable label="Kill switch by account">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Account</Table.Th>
                  <Table.Th className="pages-num">Day start</Table.Th>
                  <Table.Th className="pages-num">Today</Table.Th>
                  <Table.Th>State</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {ASSET_CLASSES.flatMap((assetClass) => [
                  <RiskRow key={assetClass} assetClass={assetClass} mode="paper" />,
                  status.data?.[assetClass].live_enabled ? <RiskRow key={`${assetClass}-live`} assetClass={assetClass} mode="live" /> : null,
                ])}
              </Table.Tbody>
            </DataTable>
          </Stack>
        </Panel>
      </div>
    </Page>
  );
};
