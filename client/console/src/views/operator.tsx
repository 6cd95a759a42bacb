// The operator's console: the service (halt, live suspension), who trades live, active locks and
// running bots with the actions on them, the kill switch's latest alerts, the users (activate,
// deactivate, and one user's detail: live flags, locks, today's live orders, bot, with the
// actions on them), and the simulator and market data (a price, an outage, an instrument, OHLCV
// bars). Only operators see the page; the API refuses everyone else anyway.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZInstrumentUpsert, ZOhlcvImport, ZSimPriceRequest, type TAssetClass } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES, when } from '../format.ts';
import { AssetClassPicker } from '../pickers.tsx';

const PAGE_SIZE = 20;

/** Everything an operator action can change is read again. */
const readAgain = () =>
  Promise.all([
    queryClient.invalidateQueries(trpc.admin.overview.pathFilter()),
    queryClient.invalidateQueries(trpc.admin.haltState.pathFilter()),
    queryClient.invalidateQueries(trpc.admin.listUsers.pathFilter()),
    queryClient.invalidateQueries(trpc.admin.userDetail.pathFilter()),
    queryClient.invalidateQueries({ queryKey: ['health'] }),
  ]);

/**
 * A user's name as the user list shows it (GET /api/admin/users/{user_id}, the detail's cached
 * read), for the lists whose rows carry only the user's id; `user N` until it arrives.
 */
const useUsername = (userId: number | undefined): string => {
  const detail = useQuery(trpc.admin.userDetail.queryOptions({ user_id: userId ?? 1 }, { enabled: userId !== undefined, staleTime: 60_000 }));
  return detail.data?.username ?? (userId === undefined ? '' : `user ${userId}`);
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
    <article className="card" data-testid="service-panel">
      <h2>Service</h2>
      <dl>
        <dt>Halt</dt>
        <dd data-testid="halt-state">{halt.data ? (halted ? `halted since ${when(halt.data.updated_at ?? '')}` : 'running') : '…'}</dd>
        <dt>Live orders</dt>
        <dd data-testid="live-suspension">{overview.data ? (suspended ? 'suspended (every live order answers 503)' : 'allowed') : '…'}</dd>
      </dl>
      <p className="hint">A halt stops orders and most routes with 503 SERVICE_HALTED for every user; this page and sign-in keep working so it can be lifted here.</p>
      <button type="button" data-testid="halt-toggle" disabled={!halt.data || setHalt.isPending} onClick={() => setHalt.mutate({ halted: !halted })}>
        {halted ? 'Lift the halt' : 'Halt the service'}
      </button>{' '}
      <button type="button" data-testid="suspend-toggle" disabled={!overview.data || suspend.isPending} onClick={() => suspend.mutate({ suspended: !suspended })}>
        {suspended ? 'Allow live orders' : 'Suspend live orders'}
      </button>
      <ErrorNotice error={setHalt.error ?? suspend.error ?? halt.error ?? overview.error} />
      <DoneNotice text={setHalt.data ? (setHalt.data.halted ? 'The service is halted.' : 'The halt is lifted.') : undefined} />
    </article>
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
    <article className="card wide" data-testid="trading-panel">
      <h2>Live trading, locks and bots</h2>
      <ErrorNotice error={clearLock.error ?? disableLive.error ?? stopBot.error ?? overview.error} />
      <DoneNotice text={clearLock.data ? `Lock of ${clearedFor} (${ASSET_CLASS_NAMES[clearLock.data.asset_class]}) cleared.` : undefined} />
      <h3>Active locks</h3>
      {data && data.active_locks.length === 0 ? <p data-testid="no-locks">No account is locked.</p> : null}
      <table data-testid="locks">
        <tbody>
          {data?.active_locks.map((lock) => (
            <tr key={`${lock.user_id}:${lock.asset_class}`} data-testid="lock-row">
              <td>{lock.username}</td>
              <td>{ASSET_CLASS_NAMES[lock.asset_class]}</td>
              <td>until {when(lock.locked_until)}</td>
              <td>{lock.reason}</td>
              <td>
                <button type="button" data-testid="clear-lock" disabled={clearLock.isPending} onClick={() => clearLock.mutate({ user_id: lock.user_id, asset_class: lock.asset_class })}>
                  Clear lock
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Live enabled</h3>
      {data && data.live_enabled.length === 0 ? <p>Nobody trades live.</p> : null}
      <table data-testid="live-users">
        <tbody>
          {data?.live_enabled.map((entry) => (
            <tr key={`${entry.user_id}:${entry.asset_class}`}>
              <td>{entry.username}</td>
              <td>{ASSET_CLASS_NAMES[entry.asset_class]}</td>
              <td>{entry.first_live_order_at ? `first live order ${when(entry.first_live_order_at)}` : 'no live order yet'}</td>
              <td>{data.live_orders_today.find((count) => count.user_id === entry.user_id && count.asset_class === entry.asset_class)?.count ?? 0} live orders today</td>
              <td>
                <button type="button" disabled={disableLive.isPending} onClick={() => disableLive.mutate({ user_id: entry.user_id, asset_class: entry.asset_class })}>
                  Disable live
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Running bots</h3>
      {data && data.running_bots.length === 0 ? <p>No bot runs.</p> : null}
      <table data-testid="bots">
        <tbody>
          {data?.running_bots.map((bot) => (
            <tr key={bot.user_id}>
              <td>
                <Username userId={bot.user_id} />
              </td>
              <td>{ASSET_CLASS_NAMES[bot.asset_class]}</td>
              <td>{bot.strategy_name}</td>
              <td>{bot.live_mode ? 'live' : 'paper'}</td>
              <td>since {when(bot.started_at)}</td>
              <td>
                <button type="button" disabled={stopBot.isPending} onClick={() => stopBot.mutate({ user_id: bot.user_id })}>
                  Stop bot
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
};

const UserDetail = ({ userId }: { userId: number }) => {
  const detail = useQuery(trpc.admin.userDetail.queryOptions({ user_id: userId }));
  const clearLock = useMutation(trpc.admin.clearLock.mutationOptions({ onSettled: readAgain }));
  const disableLive = useMutation(trpc.admin.disableLive.mutationOptions({ onSettled: readAgain }));
  const stopBot = useMutation(trpc.admin.stopUserBot.mutationOptions({ onSettled: readAgain }));
  const data = detail.data;
  return (
    <div data-testid="user-detail">
      <h3>
        {data ? `${data.username} (${data.email}, ${data.role}, ${data.is_active ? 'active' : 'deactivated'})` : `User ${userId}`}
      </h3>
      <ErrorNotice error={detail.error ?? clearLock.error ?? disableLive.error ?? stopBot.error} />
      {data ? (
        <>
          <table>
            <thead>
              <tr>
                <th>Asset class</th>
                <th>Live</th>
                <th>Lock</th>
                <th>Live orders today</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {ASSET_CLASSES.map((assetClass) => {
                const live = data.live[assetClass];
                return (
                  <tr key={assetClass} data-testid={`detail-${assetClass}`}>
                    <td>{ASSET_CLASS_NAMES[assetClass]}</td>
                    <td>{live.live_enabled ? `enabled${live.first_live_order_at ? `, first order ${when(live.first_live_order_at)}` : ''}` : 'paper only'}</td>
                    <td data-testid="detail-lock">{live.locked_until ? `until ${when(live.locked_until)}${live.lock_reason ? `: ${live.lock_reason}` : ''}` : 'none'}</td>
                    <td>
                      {live.live_orders_today} / {live.daily_limit}
                    </td>
                    <td>
                      {live.locked_until ? (
                        <button type="button" disabled={clearLock.isPending} onClick={() => clearLock.mutate({ user_id: userId, asset_class: assetClass })}>
                          Clear lock
                        </button>
                      ) : null}{' '}
                      {live.live_enabled ? (
                        <button type="button" disabled={disableLive.isPending} onClick={() => disableLive.mutate({ user_id: userId, asset_class: assetClass })}>
                          Disable live
                        </button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p data-testid="detail-bot">
            Bot:{' '}
            {data.bot?.is_running ? (
              <>
                running {data.bot.strategy_name} on {data.bot.symbols.join(', ')} ({data.bot.live_mode ? 'live' : 'paper'}){' '}
                <button type="button" disabled={stopBot.isPending} onClick={() => stopBot.mutate({ user_id: userId })}>
                  Stop bot
                </button>
              </>
            ) : data.bot ? (
              `stopped${data.bot.stopped_by ? ` by ${data.bot.stopped_by}` : ''}`
            ) : (
              'never started'
            )}
          </p>
        </>
      ) : null}
    </div>
  );
};

const AlertsPanel = () => {
  const alerts = useQuery(trpc.admin.alerts.queryOptions({ page: 1, size: 20 }));
  return (
    <article className="card wide" data-testid="alerts-panel">
      <h2>Latest critical alerts</h2>
      <ErrorNotice error={alerts.error} />
      {alerts.data && alerts.data.items.length === 0 ? <p>No alert yet.</p> : null}
      <table>
        <tbody>
          {alerts.data?.items.map((alert) => (
            <tr key={alert.id} data-testid="alert-row">
              <td>{when(alert.at)}</td>
              <td>
                <Username userId={alert.user_id} />
              </td>
              <td>{ASSET_CLASS_NAMES[alert.asset_class]}</td>
              <td data-testid="alert-kind">{alert.kind === 'kill_switch_lock' ? 'lock' : 'warning'}</td>
              <td>{alert.title}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
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
    <article className="card wide" data-testid="users-panel">
      <h2>Users</h2>
      <ErrorNotice error={activate.error ?? deactivate.error ?? users.error} />
      <table data-testid="users">
        <thead>
          <tr>
            <th>User</th>
            <th>E-mail</th>
            <th>Role</th>
            <th>Active</th>
            <th>Since</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {users.data?.items.map((user) => (
            <tr key={user.id} data-testid="user-row">
              <td>{user.username}</td>
              <td>{user.email}</td>
              <td>{user.role}</td>
              <td>{user.is_active ? 'yes' : 'no'}</td>
              <td>{when(user.created_at)}</td>
              <td>
                <button type="button" data-testid="user-details" onClick={() => setShown(shown === user.id ? undefined : user.id)}>
                  {shown === user.id ? 'Hide' : 'Details'}
                </button>{' '}
                {user.is_active ? (
                  <button type="button" disabled={deactivate.isPending} onClick={() => deactivate.mutate({ user_id: user.id })}>
                    Deactivate
                  </button>
                ) : (
                  <button type="button" disabled={activate.isPending} onClick={() => activate.mutate({ user_id: user.id })}>
                    Activate
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown === undefined ? null : <UserDetail userId={shown} />}
      <p>
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>{' '}
        page {page} of {pages}{' '}
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </p>
    </article>
  );
};

const SimulatorPanel = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const setPrice = useMutation(trpc.admin.setSimPrice.mutationOptions());
  const outage = useMutation(trpc.admin.setSimOutage.mutationOptions());
  const submitPrice = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const price = fieldText(form, 'price');
    const checked = ZSimPriceRequest.safeParse({ asset_class: assetClass, symbol: fieldText(form, 'symbol'), price: price === '' ? null : Number(price) });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) setPrice.mutate(checked.data);
  };
  return (
    <article className="card" data-testid="simulator-panel">
      <h2>Simulator</h2>
      <form onSubmit={submitPrice} noValidate data-testid="sim-price-form">
        <AssetClassPicker value={assetClass} onChange={setAssetClass} />
        <TextField name="symbol" label="Symbol" placeholder="BTC/USDT" errors={fieldErrors} />
        <TextField name="price" label="Price (empty: back to the walk)" inputMode="decimal" errors={fieldErrors} />
        <button type="submit" disabled={setPrice.isPending}>
          Set price
        </button>
      </form>
      <DoneNotice text={setPrice.data ? `${setPrice.data.symbol} trades at ${setPrice.data.price} (${setPrice.data.source}).` : undefined} />
      <h3>Outages</h3>
      <p className="hint">A simulated outage answers every order of the asset class with 502 BROKER_UNAVAILABLE.</p>
      {ASSET_CLASSES.map((each) => (
        <span key={each}>
          <button type="button" disabled={outage.isPending} onClick={() => outage.mutate({ asset_class: each, down: !(outage.data?.[each] ?? false) })}>
            {outage.data?.[each] ? `End the ${ASSET_CLASS_NAMES[each]} outage` : `Take ${ASSET_CLASS_NAMES[each]} down`}
          </button>{' '}
        </span>
      ))}
      <ErrorNotice error={setPrice.error ?? outage.error} />
    </article>
  );
};

const MarketDataPanel = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('us_equity');
  const [fieldErrors, setFieldErrors] = useState<TFieldErrors>({});
  const upsert = useMutation(trpc.admin.upsertInstrument.mutationOptions());
  const importBars = useMutation(trpc.admin.importOhlcv.mutationOptions());
  const submitInstrument = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const checked = ZInstrumentUpsert.safeParse({
      asset_class: assetClass,
      symbol: fieldText(form, 'symbol'),
      exchange: fieldText(form, 'exchange'),
      currency: fieldText(form, 'currency'),
      name: fieldText(form, 'name'),
      reference_price: fieldText(form, 'reference_price'),
      tick_size: fieldText(form, 'tick_size') || undefined,
      lot_size: fieldText(form, 'lot_size'),
      fractional: form.get('fractional') === 'on',
    });
    setFieldErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) upsert.mutate(checked.data);
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
    <article className="card" data-testid="market-data-panel">
      <h2>Instruments and bars</h2>
      <AssetClassPicker value={assetClass} onChange={setAssetClass} />
      <form onSubmit={submitInstrument} noValidate data-testid="instrument-form">
        <TextField name="symbol" label="Symbol" errors={fieldErrors} />
        <TextField name="exchange" label="Exchange" placeholder="NASDAQ" errors={fieldErrors} />
        <TextField name="currency" label="Currency" placeholder="USD" errors={fieldErrors} />
        <TextField name="name" label="Name" errors={fieldErrors} />
        <TextField name="reference_price" label="Reference price" inputMode="decimal" errors={fieldErrors} />
        <TextField name="tick_size" label="Tick size (not for KRX)" inputMode="decimal" errors={fieldErrors} />
        <TextField name="lot_size" label="Lot size" inputMode="decimal" errors={fieldErrors} />
        <label>
          <input type="checkbox" name="fractional" /> fractional quantities
        </label>
        <button type="submit" disabled={upsert.isPending}>
          Save instrument
        </button>
      </form>
      <DoneNotice text={upsert.data ? `${upsert.data.symbol} saved.` : undefined} />
      <form onSubmit={(event) => void submitBars(event)} noValidate data-testid="bars-form">
        <TextField name="bars_symbol" label="Symbol of the bars" errors={fieldErrors} />
        <label>
          Daily bars (CSV: date,open,high,low,close,volume)
          <input type="file" name="csv" accept=".csv,text/csv" />
        </label>
        {fieldErrors.csv ? <span className="field-error">{fieldErrors.csv}</span> : null}
        <button type="submit" disabled={importBars.isPending}>
          Import bars
        </button>
      </form>
      <DoneNotice text={importBars.data ? `Bars imported for ${importBars.data.symbol}.` : undefined} />
      <ErrorNotice error={upsert.error ?? importBars.error} />
    </article>
  );
};

export const Operator = () => (
  <section>
    <h1>Operator</h1>
    <div className="cards">
      <ServicePanel />
      <SimulatorPanel />
      <MarketDataPanel />
      <TradingPanel />
      <AlertsPanel />
      <UsersPanel />
    </div>
  </section>
);
