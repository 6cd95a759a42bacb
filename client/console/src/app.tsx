// The console's shell: the session decides between the sign-in pages and the trading pages;
// every page has the status bar.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore, type ReactNode } from 'react';
import { queryClient, trpc } from './api.ts';
import { ErrorNotice } from './feedback.tsx';
import { useOrdersFeed } from './orders-feed.ts';
import { navigate, usePath } from './router.ts';
import { session } from './session.ts';
import { StatusBar } from './status-bar.tsx';
import { Keys } from './views/keys.tsx';
import { Orders } from './views/orders.tsx';
import { Overview } from './views/overview.tsx';
import { Positions } from './views/positions.tsx';
import { Register, SignIn } from './views/sign-in.tsx';
import { Ticket } from './views/ticket.tsx';
import { Analysis, Backtests, Bot, Chart } from './research-pages.tsx';
import { Live } from './views/live.tsx';
import { Operator } from './views/operator.tsx';
import { Settings } from './views/settings.tsx';

const PAGES: Record<string, { title: string; view: () => ReactNode; operatorOnly?: boolean }> = {
  '/': { title: 'Overview', view: Overview },
  '/ticket': { title: 'Order ticket', view: Ticket },
  '/orders': { title: 'Orders', view: Orders },
  '/positions': { title: 'Positions', view: Positions },
  '/keys': { title: 'Exchange keys', view: Keys },
  // Research and bot pages (issue 19).
  '/chart': { title: 'Chart', view: Chart },
  '/backtests': { title: 'Backtests', view: Backtests },
  '/analysis': { title: 'Analysis', view: Analysis },
  '/bot': { title: 'Bot', view: Bot },
  // Live trading and the operator's views.
  '/live': { title: 'Live trading', view: Live },
  '/settings': { title: 'Settings', view: Settings },
  '/operator': { title: 'Operator', view: Operator, operatorOnly: true },
};
const PUBLIC_PAGES: Record<string, () => ReactNode> = { '/signin': SignIn, '/register': Register };

const NavLink = ({ to, children }: { to: string; children: ReactNode }) => (
  <a href={`/app${to}`} className={usePath() === to ? 'active' : undefined} onClick={(event) => (event.preventDefault(), navigate(to))}>
    {children}
  </a>
);

const Header = () => {
  const me = useQuery(trpc.auth.me.queryOptions());
  const logout = useMutation(
    trpc.auth.logout.mutationOptions({
      // Signed out here whatever the server says: a refused logout must not keep the session.
      onSettled: () => (session.signOut(), queryClient.clear(), navigate('/signin', { replace: true })),
    }),
  );
  const signOut = () => {
    const refreshToken = session.refreshToken();
    if (refreshToken) logout.mutate({ refresh_token: refreshToken });
    else session.signOut();
  };
  return (
    <header>
      <nav>
        {Object.entries(PAGES)
          // The operator's page is for operators: the API refuses it to anyone else anyway.
          .filter(([, page]) => !page.operatorOnly || me.data?.role === 'admin')
          .map(([path, page]) => (
            <NavLink key={path} to={path}>
              {page.title}
            </NavLink>
          ))}
      </nav>
      <span className="who" data-testid="username">
        {me.data?.username}
      </span>
      <button type="button" onClick={signOut} disabled={logout.isPending}>
        Sign out
      </button>
    </header>
  );
};

const Redirect = ({ to }: { to: string }) => {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
};

export const App = () => {
  const state = useSyncExternalStore(session.subscribe, session.state);
  const path = usePath();
  const feed = useOrdersFeed(state === 'signed_in');
  useEffect(() => void session.restore(), []);

  let body: ReactNode;
  if (state === 'restoring') body = <p>Signing in…</p>;
  else if (state === 'signed_out') {
    const View = PUBLIC_PAGES[path];
    body = View ? <View /> : <Redirect to="/signin" />;
  } else {
    const page = PAGES[path];
    body = page ? (
      <>
        <Header />
        <main>
          <page.view />
        </main>
      </>
    ) : PUBLIC_PAGES[path] ? (
      <Redirect to="/" />
    ) : (
      <ErrorNotice error={new Error(`No page at /app${path}`)} />
    );
  }
  return (
    <>
      <StatusBar feed={feed} />
      {body}
    </>
  );
};
