// The paper account of each asset class: equity, cash, buying power and open orders.
import { useQuery } from '@tanstack/react-query';
import { errorCodeOf, type TAssetClass } from '../../../index.ts';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES, money } from '../format.ts';
import { PaperBadge } from '../pickers.tsx';

const AccountCard = ({ assetClass }: { assetClass: TAssetClass }) => {
  const account = useQuery(trpc.equity.account.queryOptions({ asset_class: assetClass, mode: 'paper' }, { retry: false }));
  const open = useQuery(trpc.equity.listOrders.queryOptions({ asset_class: assetClass, status: 'open', page: 1, size: 1 }, { enabled: account.isSuccess }));
  const notConfigured = errorCodeOf(account.error) === 'BROKER_NOT_CONFIGURED';
  return (
    <article className="card" data-testid={`account-${assetClass}`}>
      <h2>
        {ASSET_CLASS_NAMES[assetClass]} <PaperBadge />
      </h2>
      {account.isPending ? <p>Loading…</p> : null}
      {notConfigured ? <p>No paper key registered for this asset class: add one under Exchange keys.</p> : account.error ? <ErrorNotice error={account.error} /> : null}
      {account.data ? (
        <dl>
          <dt>Equity</dt>
          <dd data-testid="equity">{money(account.data.equity, account.data.currency)}</dd>
          <dt>Cash</dt>
          <dd data-testid="cash">{money(account.data.cash, account.data.currency)}</dd>
          <dt>Buying power</dt>
          <dd data-testid="buying-power">{money(account.data.buying_power, account.data.currency)}</dd>
          <dt>Open orders</dt>
          <dd data-testid="open-orders">{open.data ? open.data.total : '…'}</dd>
        </dl>
      ) : null}
    </article>
  );
};

export const Overview = () => (
  <section>
    <h1>Overview</h1>
    <div className="cards">
      {ASSET_CLASSES.map((assetClass) => (
        <AccountCard key={assetClass} assetClass={assetClass} />
      ))}
    </div>
  </section>
);
