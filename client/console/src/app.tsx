// The console's routes: the session decides between the sign-in pages and the trading pages;
// every page has the status bar.
import { Group, Loader, Text } from '@mantine/core';
import { useEffect, useSyncExternalStore, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { trpc } from './api.ts';
import { ErrorNotice } from './feedback.tsx';
import { useOrdersFeed } from './orders-feed.ts';
import { navigate, usePath } from './router.ts';
import { session } from './session.ts';
import { Nav, type NavPage } from './shell/nav.tsx';
import { PublicLayout } from './shell/public-layout.tsx';
import { Shell } from './shell/shell.tsx';
import { StatusBar } from './status-bar.tsx';
import { Keys } from './views/keys.tsx';
import { Orders } from './views/orders.tsx';
import { Overview } from './views/overview.tsx';
import { Positions } from './views/positions.tsx';
import { Register, SignIn } from './views/sign-in.tsx';
import { Ticket } from './views/ticket.tsx';
import { Analysis, Backtests, Bot, Chart, Portfolio } from './research-pages.tsx';
import { Live } from './views/live.tsx';
import { Operator } from './views/operator.tsx';
import { Settings } from './views/settings.tsx';

interface Page {
  title: string;
  /** The navigation's group the page is listed under. */
  group: 'Trading' | 'Research' | 'Account';
  view: () => ReactNode;
  operatorOnly?: boolean;
}

const PAGES: Record<string, Page> = {
  '/': { title: 'Overview', group: 'Trading', view: Overview },
  '/ticket': { title: 'Order ticket', group: 'Trading', view: Ticket },
  '/orders': { title: 'Orders', group: 'Trading', view: Orders },
  '/positions': { title: 'Positions', group: 'Trading', view: Positions },
  '/portfolio': { title: 'Portfolio', group: 'Trading', view: Portfolio },
  // Research and bot pages (issue 19).
  '/chart': { title: 'Chart', group: 'Research', view: Chart },
  '/backtests': { title: 'Backtests', group: 'Research', view: Backtests },
  '/analysis': { title: 'Analysis', group: 'Research', view: Analysis },
  '/bot': { title: 'Bot', group: 'Research', view: Bot },
  // Live trading, keys, settings and the operator's views.
  '/live': { title: 'Live trading', group: 'Account', view: Live },
  '/keys': { title: 'Exchange keys', group: 'Account', view: Keys },
  '/settings': { title: 'Settings', group: 'Account', view: Settings },
  '/operator': { title: 'Operator', group: 'Account', view: Operator, operatorOnly: true },
};
const PUBLIC_PAGES: Record<string, () => ReactNode> = { '/signin': SignIn, '/register': Register };

/** The navigation's pages for this user: the operator's page is for operators (the API refuses it to anyone else anyway). */
const useNavPages = (): NavPage[] => {
  const me = useQuery(trpc.auth.me.queryOptions());
  return Object.entries(PAGES)
    .filter(([, page]) => !page.operatorOnly || me.data?.role === 'admin')
    .map(([path, page]) => ({ path, title: page.title, group: page.group }));
};

const Redirect = ({ to }: { to: string }) => {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
};

const SignedIn = ({ path, status }: { path: string; status: ReactNode }) => {
  const pages = useNavPages();
  const page = PAGES[path];
  if (!page && PUBLIC_PAGES[path]) return <Redirect to="/" />;
  return (
    <Shell nav={<Nav pages={pages} />} status={status}>
      {page ? <page.view /> : <ErrorNotice error={new Error(`No page at /app${path}`)} />}
    </Shell>
  );
};

export const App = () => {
  const state = useSyncExternalStore(session.subscribe, session.state);
  const path = usePath();
  const feed = useOrdersFeed(state === 'signed_in');
  useEffect(() => void session.restore(), []);
  const status = <StatusBar feed={feed} />;

  if (state === 'signed_in') return <SignedIn path={path} status={status} />;
  const View = PUBLIC_PAGES[path];
  return (
    <PublicLayout status={status}>
      {state === 'restoring' ? (
        <Group justify="center" gap="xs" py="xl">
          <Loader size="xs" />
          <Text size="sm" c="dimmed">
            Signing in…
          </Text>
        </Group>
      ) : View ? (
        <View />
      ) : (
        <Redirect to="/signin" />
      )}
    </PublicLayout>
  );
};
