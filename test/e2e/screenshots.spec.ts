// The console's screenshots: every page, signed out, as a user with data in every
// table and as the operator, at a desktop's 1400×900 and a phone's 390×844, light and dark,
// compared with the baselines in docs/screenshots/ (playwright.config.ts: expect.toHaveScreenshot).
// A change to a page updates its baselines in the same commit:
//   npx playwright test test/e2e/screenshots.spec.ts --update-snapshots
//
// The same pixels every run:
// - its own service (startSeededService), so nothing another spec did shows (the operator's list
//   of users, a halt, a price): a fresh database, the seeded bars and prices, no price walk
//   (SIM_TICK_INTERVAL_MS=0), and one trader with a fixed name, fixed order ids and a fixed key;
// - the browser's clock fixed (Date only: timers run, so debounces and polls work);
// - what the server makes unique or stamps with its own time masked: its timestamps (dates
//   with a time of day other than midnight; the backtest's fills are on daily bars, at midnight,
//   and stay compared), the ticket's random id;
// - each page settled before its shot: its data in, no "Loading…", the sockets open (or closed
//   where the page listens to none), its charts' canvases there, the fonts loaded, no hover or
//   focus left on the link that opened it; toHaveScreenshot then retakes it until it matches.
//
// The same load is the page's accessibility check (axe, no serious or critical WCAG A/AA
// violation: expectAccessible in helpers.ts), once its shot is taken: light and dark at 1400×900
// (every page, a backtest result and an analysis report open, and the status bar's socket
// colours on the Overview) and the trader's first pages at 390×844 (SCANNED). A page settled for
// its shot is the page people read, and one visit costs the browser half of two.
// accessibility.spec.ts keeps what these pages do not show.
import { expect, test, type BrowserContext, type Locator, type Page } from '@playwright/test';
import { E2E_ADMIN, startSeededService } from './global-setup.ts';
import { expectAccessible, expectSocketColoursAccessible, watchErrors } from './helpers.ts';
import type { E2eService } from './service.ts';

/** A name no other spec registers (they run on their own service anyway). */
const TRADER = { username: 'shots_trader', password: 'shots-trader-password' };
/** The browser's "now": any fixed instant will do, as long as it never moves. */
const FROZEN_AT = new Date('2026-01-15T09:30:00Z');
/** Where the console keeps the light/dark choice (client/console/src/theme/color-scheme.ts, COLOR_SCHEME_KEY). */
const COLOR_SCHEME_KEY = 'console-color-scheme';

const VIEWPORTS = [
  { width: 1400, height: 900 },
  { width: 390, height: 844 },
] as const;
const SCHEMES = ['light', 'dark'] as const;

/**
 * The pages axe checks, by variant: every page light and dark on the desktop, and on a phone the
 * trader's pages whose tables and cards reflow most (the overview, the ticket, the blotter, the
 * positions), light.
 */
const SCANNED: Record<string, 'every page' | readonly string[]> = {
  '1400-light': 'every page',
  '1400-dark': 'every page',
  '390-light': ['overview', 'ticket', 'orders', 'positions'],
  '390-dark': [],
};
const scanned = (variant: string, name: string) => {
  const pages = SCANNED[variant] ?? [];
  return pages === 'every page' || pages.includes(name);
};

/** A time of day rendered by format.ts `when` ("15/01/2026, 09:30:00 UTC"), other than midnight: the server's own clock. */
const SERVER_TIME = /\d{2}\/\d{2}\/\d{4}, (?!00:00:00)\d{2}:\d{2}:\d{2}/;

// The spec's failures come with their own pictures (expected, actual, diff): no trace, whose
// recording of every step slows each page down on CI's two shared cores.
test.use({ trace: 'off' });

let service: E2eService;

const call = async (method: string, path: string, body?: unknown, token?: string): Promise<Record<string, any>> => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : {};
};

const CRYPTO_ORDERS = `/api/equity/orders?asset_class=crypto&page=1&size=50`;

/**
 * The trader's record, through the API: a paper key, a filled market order, a filled bracket
 * entry with its two legs resting, a resting limit order, a backtest and an analysis report.
 * Every order's id is fixed; the orders are placed one after the other, so they list in one order.
 */
const seedTrader = async () => {
  await call('POST', '/api/auth/register', { username: TRADER.username, email: `${TRADER.username}@example.com`, password: TRADER.password });
  const { access_token: token, refresh_token: refreshToken } = await call('POST', '/api/auth/login', TRADER);
  await call('POST', '/api/exchange-keys', { asset_class: 'crypto', exchange: 'crypto_exchange', label: 'paper key', api_key: 'shots-paper-key-0001', api_secret: 'shots-paper-secret', paper_mode: true }, token);

  /** The trader's crypto orders as `id status`, newest first, once they are what the placing left them. */
  const ordersAre = async (expected: string[]) =>
    expect
      .poll(async () => ((await call('GET', CRYPTO_ORDERS, undefined, token)).items as { client_order_id: string; status: string }[]).map((order) => `${order.client_order_id} ${order.status}`))
      .toEqual(expected);

  const btc = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy' } as const;
  await call('POST', '/api/equity/orders', { ...btc, order_type: 'market', qty: 0.01, client_order_id: 'shots-market' }, token);
  await ordersAre(['shots-market filled']);
  await call('POST', '/api/equity/orders', { ...btc, order_type: 'market', qty: 0.02, client_order_id: 'shots-bracket', bracket: { take_profit: 60_000, stop_loss: 45_000 } }, token);
  await ordersAre(['shots-bracket:tp open', 'shots-bracket:sl open', 'shots-bracket filled', 'shots-market filled']);
  await call('POST', '/api/equity/orders', { ...btc, order_type: 'limit', qty: 0.01, limit_price: 48_000, time_in_force: 'gtc', client_order_id: 'shots-limit' }, token);
  await ordersAre(['shots-limit open', 'shots-bracket:tp open', 'shots-bracket:sl open', 'shots-bracket filled', 'shots-market filled']);

  await call('POST', '/api/equity/backtest', { asset_class: 'us_equity', symbol: 'AAPL', strategy_name: 'sma_crossover', strategy_params: { fast: 5, slow: 20 }, start_date: '2025-01-01', end_date: '2025-10-27', initial_capital: 10_000 }, token);
  const report = await call('POST', '/api/equity/analyze', { symbol: 'AAPL', mode: 'quick', inline: true }, token);
  await expect.poll(async () => (await call('GET', `/api/equity/reports/${String(report.report_id)}`, undefined, token).catch(() => ({ status: '?' }))).status).toBe('done');

  // The setup's session ends, so the Settings page lists the page's own session only.
  await call('POST', '/api/auth/logout', { refresh_token: refreshToken }, token);
};

/** A page at rest: its data in, nothing loading, the status bar's sockets settled, fonts loaded, no hover or focus. */
const settle = async (page: Page, { signedIn, live }: { signedIn: boolean; live: boolean }) => {
  const status = page.getByTestId('status-bar');
  await expect(status.getByTestId('service-state')).toHaveText('service: ok');
  await expect(status.getByTestId('flags')).toBeVisible();
  await expect(status.getByTestId('feed-state')).toHaveText(signedIn ? 'orders socket: live' : 'orders socket: signed out');
  await expect(status.getByTestId('live-socket-state')).toHaveText(live ? 'live socket: live' : 'live socket: closed');
  await expect(page.getByText(/^(Loading…|Signing in…|…)$/)).toHaveCount(0);
  await expect(page.locator('.mantine-Loader-root')).toHaveCount(0);
  await page.locator('html').evaluate(async (html) => {
    const document = html.ownerDocument;
    await document.fonts.ready;
    const focused = document.activeElement;
    if (focused && 'blur' in focused) focused.blur();
  });
  await page.mouse.move(0, 0);
};

/**
 * The settled page's screenshot, then (in SCANNED) its axe check on the same load: after the shot,
 * so nothing axe does to the page can show in it. Both soft: every page of the variant is
 * compared and checked, and each failure names its page.
 */
const shoot = async (page: Page, name: string, variant: string, mask: Locator[] = []) => {
  await expect.soft(page).toHaveScreenshot(`${name}-${variant}.png`, { fullPage: true, animations: 'disabled', mask: [page.getByText(SERVER_TIME), ...mask] });
  if (scanned(variant, name)) await expectAccessible(page, `${name} (${variant})`, { soft: true });
};

const go = async (page: Page, title: string) => {
  await page.getByRole('navigation').getByRole('link', { name: title, exact: true }).click();
  await expect(page.getByRole('heading', { name: title, level: 1 })).toBeVisible();
};

const signIn = async (page: Page, credentials: { username: string; password: string }) => {
  await page.goto('/app/signin');
  await page.getByLabel('Username').fill(credentials.username);
  await page.getByLabel('Password').fill(credentials.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Overview', level: 1 })).toBeVisible();
};

/** A canvas chart with what it should show (its data attributes) and its canvases laid out. */
const chartReady = async (chart: Locator, attributes: Record<string, string>) => {
  for (const [name, value] of Object.entries(attributes)) await expect(chart).toHaveAttribute(name, value);
  await expect(chart.locator('canvas').first()).toBeVisible();
};

/**
 * The trader's pages, in the navigation's order: its title, the file's name, whether it listens
 * to /ws/live, what shows it has its data (and opens what it shows), and what to mask beyond the
 * server's timestamps.
 */
const USER_PAGES: { title: string; name: string; live: boolean; ready: (page: Page) => Promise<void>; mask?: (page: Page) => Locator[] }[] = [
  {
    title: 'Overview',
    name: 'overview',
    live: true,
    ready: async (page) => {
      await expect(page.getByTestId('latest-fill')).toHaveCount(2);
      await expect(page.getByTestId('account-crypto').getByTestId('open-orders')).toHaveText('3');
      await expect(page.getByTestId('overview-bot-state')).toHaveText('stopped');
      await chartReady(page.getByTestId('overview-equity-chart'), { 'data-points': '1' });
    },
    // The curve's time axis shows the server's day, which the browser's frozen clock does not fix.
    mask: (page) => [page.getByTestId('overview-equity-chart')],
  },
  {
    title: 'Order ticket',
    name: 'ticket',
    live: true,
    ready: async (page) => expect(page.getByTestId('client-order-id')).toBeVisible(),
    // A random id per ticket, made in the page.
    mask: (page) => [page.getByTestId('client-order-id')],
  },
  {
    title: 'Orders',
    name: 'orders',
    live: false,
    ready: async (page) => {
      await expect(page.getByTestId('order-row')).toHaveCount(5);
      await expect(page.getByTestId('order-leg')).toHaveCount(2);
    },
  },
  { title: 'Positions', name: 'positions', live: false, ready: async (page) => expect(page.getByTestId('position-row')).toHaveCount(1) },
  {
    title: 'Portfolio',
    name: 'portfolio',
    live: false,
    ready: async (page) => {
      await expect(page.getByTestId('performance')).toBeVisible();
      await chartReady(page.getByTestId('portfolio-equity-chart'), { 'data-points': '1' });
      await expect(page.getByTestId('ledger-row')).toHaveCount(2);
      await expect(page.getByTestId('symbol-row')).toHaveCount(1);
    },
    // The curve's axis and the calendar's days are the server's dates, which the frozen clock does not fix.
    mask: (page) => [page.getByTestId('portfolio-equity-chart'), page.getByTestId('pnl-calendar')],
  },
  {
    title: 'Chart',
    name: 'chart',
    live: true,
    ready: async (page) => {
      // The seeded daily bars (BTC/USDT, the first pair, has none).
      await page.getByLabel('Symbol').selectOption('ETH/USDT');
      await chartReady(page.getByTestId('price-chart'), { 'data-bars': '300', 'data-markers': '0' });
      await expect(page.getByTestId('chart-summary')).toContainText('prices in USDT');
    },
  },
  {
    title: 'Backtests',
    name: 'backtests',
    live: false,
    ready: async (page) => {
      await page.getByTestId('backtest-history-row').getByRole('button', { name: 'Open' }).click();
      const result = page.getByTestId('backtest-result');
      await chartReady(result.getByTestId('equity-chart'), { 'data-points': '300' });
      await chartReady(result.getByTestId('backtest-price-chart'), { 'data-bars': '300' });
      await expect(result.getByTestId('backtest-trade-row').first()).toBeVisible();
    },
  },
  {
    title: 'Analysis',
    name: 'analysis',
    live: true,
    ready: async (page) => {
      await page.getByTestId('report-row').getByRole('button', { name: 'Open' }).click();
      const report = page.getByTestId('report');
      await expect(report.getByTestId('report-status')).toHaveText('done');
      await expect(report.getByTestId('trace').first()).toBeVisible();
    },
  },
  {
    title: 'Bot',
    name: 'bot',
    live: true,
    ready: async (page) => {
      await expect(page.getByTestId('bot-state')).toHaveText('stopped');
      await expect(page.getByTestId('live-state')).toHaveText('bot socket: live');
      await expect(page.getByTestId('no-bot-trades')).toBeVisible();
    },
  },
  {
    title: 'Live trading',
    name: 'live',
    live: false,
    ready: async (page) => {
      await expect(page.getByTestId('live-crypto')).toBeVisible();
      await expect(page.getByTestId('risk-crypto')).toBeVisible();
    },
  },
  { title: 'Exchange keys', name: 'keys', live: false, ready: async (page) => expect(page.getByTestId('key-row')).toHaveCount(1) },
  {
    title: 'Settings',
    name: 'settings',
    live: false,
    ready: async (page) => {
      await expect(page.getByTestId('session-row')).toHaveCount(1);
      await expect(page.getByTestId('current-session')).toBeVisible();
      await expect(page.getByTestId('no-notifications')).toBeVisible();
    },
  },
];

test.beforeAll(async () => {
  test.setTimeout(120_000);
  service = await startSeededService();
  await seedTrader();
});
test.afterAll(async () => service?.stop());

for (const viewport of VIEWPORTS) {
  for (const scheme of SCHEMES) {
    const variant = `${viewport.width}-${scheme}`;
    test(`every page at ${viewport.width}×${viewport.height}, ${scheme}`, async ({ browser }) => {
      test.setTimeout(240_000);
      let context: BrowserContext | undefined;
      try {
        context = await browser.newContext({ baseURL: service.baseUrl, viewport, colorScheme: scheme, reducedMotion: 'reduce' });
        await context.clock.setFixedTime(FROZEN_AT);
        // The scheme as a trader's stored choice, read before the first render.
        await context.addInitScript({ content: `localStorage.setItem(${JSON.stringify(COLOR_SCHEME_KEY)}, ${JSON.stringify(scheme)});` });
        const page = await context.newPage();
        const errors = watchErrors(page);

        await test.step('signed out', async () => {
          for (const [path, heading, name] of [
            ['/app/signin', 'Sign in', 'signin'],
            ['/app/register', 'Register', 'register'],
          ] as const) {
            await page.goto(path);
            await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
            await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', scheme);
            await settle(page, { signedIn: false, live: false });
            await shoot(page, name, variant);
          }
        });

        await test.step('as a trader', async () => {
          await signIn(page, TRADER);
          await expect(page.getByTestId('username')).toHaveText(TRADER.username);
          for (const { title, name, live, ready, mask } of USER_PAGES) {
            await test.step(title, async () => {
              await go(page, title);
              await ready(page);
              await settle(page, { signedIn: true, live });
              await shoot(page, name, variant, mask?.(page));
              // The socket states other than live, each one's colour in the status bar (the page's
              // own state put back after).
              if (name === 'overview' && viewport.width === 1400) await expectSocketColoursAccessible(page, `status bar (${variant})`, { soft: true });
            });
          }
          // Signed out, so the next variant's Settings lists its own session only.
          await page.getByRole('button', { name: 'Sign out' }).click();
          await expect(page.getByRole('heading', { name: 'Sign in', level: 1 })).toBeVisible();
        });

        await test.step('as the operator', async () => {
          await signIn(page, E2E_ADMIN);
          await go(page, 'Operator');
          await expect(page.getByTestId('halt-state')).toHaveText('running');
          await expect(page.getByTestId('live-suspension')).toHaveText('allowed');
          await expect(page.getByTestId('no-locks')).toBeVisible();
          await expect(page.getByTestId('user-row')).toHaveCount(2);
          await expect(page.getByTestId('alerts-panel').getByText('No alert yet.')).toBeVisible();
          await settle(page, { signedIn: true, live: false });
          await shoot(page, 'operator', variant);
        });

        expect(errors).toEqual([]);
      } finally {
        await context?.close();
      }
    });
  }
}
