// The console on a phone, end to end: at 390×844 with touch, the way a new user would
// go about it. Register, sign out and back in, add a paper key, place a bracket order from the
// ticket, watch it fill on the blotter through the orders socket (no reload), close the position
// and read the day's P&L on the overview. Every control is tapped, not clicked: a tap fails when
// the control cannot be scrolled into view or something else covers it, which is what a phone
// user would run into. The real service of global-setup.ts, seeded and started as for the other
// specs; LTC/USDT is this spec's own symbol (no other spec trades it), its price set by the operator.
import { expect, test, type Locator, type Page } from '@playwright/test';
import { E2E_ADMIN } from './global-setup.ts';
import { api, baseUrl, passwordOf, PHONE, register, tokenOf } from './helpers.ts';

/** A phone: its width and height in CSS pixels, a touch screen, the mobile viewport rules (the page's <meta name="viewport">). */
const SYMBOL = 'LTC/USDT';
/** The walk's prices: the entry rests below the first, fills at the second, the position is closed at the third. */
const PRICES = { start: 80, fill: 77, close: 85 } as const;
const ORDER = { qty: '50', limit: '78', takeProfit: '90', stopLoss: '70' } as const;

const setPrice = async (price: number) => {
  const token = await tokenOf(E2E_ADMIN);
  await api('POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: SYMBOL, price }, token);
};

/** Brought into view (by the scroll boxes it sits in) and there on the screen: what a swipe to it would show. */
const scrolledTo = async (locator: Locator) => {
  await locator.scrollIntoViewIfNeeded();
  await expect(locator).toBeInViewport();
};

/** A page from the navigation, which on a phone is one row under the header that scrolls sideways. */
const go = async (page: Page, title: string) => {
  await page.getByRole('navigation').getByRole('link', { name: title, exact: true }).tap();
  await expect(page.getByRole('heading', { name: title, level: 1 })).toBeInViewport();
};

test('on a phone: sign in, place a bracket order, watch it fill, close the position, read the day’s P&L', async ({ browser }) => {
  await setPrice(PRICES.start);
  // A new user: registered, then signed out and in again from the header's button and the sign-in card.
  const { context, page, errors, username } = await register(browser, 'e2e_phone', baseUrl(), { phone: true });
  await page.getByRole('button', { name: 'Sign out' }).tap();
  await expect(page).toHaveURL(`${baseUrl()}/app/signin`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(passwordOf(username));
  await page.getByRole('button', { name: 'Sign in' }).tap();
  await expect(page.getByRole('heading', { name: 'Overview', level: 1 })).toBeInViewport();
  await expect(page.getByTestId('username')).toHaveText(username);
  await expect(page.getByTestId('feed-state')).toHaveText('orders socket: live');

  // The navigation's row is wider than the phone: it scrolls inside itself, the page does not.
  const nav = page.getByRole('navigation');
  expect(await nav.evaluate((row) => row.scrollWidth > row.clientWidth)).toBe(true);

  // The last link of the row, reached by scrolling it: a paper key for crypto.
  await go(page, 'Exchange keys');
  await page.getByLabel('Label').fill('phone key');
  await page.getByLabel('API key').fill(`e2e-phone-${username}`);
  await page.getByLabel('API secret').fill('e2e-secret-value');
  await page.getByRole('button', { name: 'Add paper key' }).tap();
  await expect(page.getByTestId('done')).toContainText('added for Crypto (paper)');

  // The ticket: a limit entry under the price, with a take profit and a stop loss on its fill.
  await go(page, 'Order ticket');
  await page.getByLabel('Symbol').fill(SYMBOL);
  await expect(page.getByLabel('Asset class')).toHaveValue('crypto');
  await page.getByLabel('Quantity').fill(ORDER.qty);
  await page.getByLabel('Type').selectOption('limit');
  await page.getByLabel('Limit price').fill(ORDER.limit);
  await page.getByLabel('Bracket (take profit and stop loss on the fill)').tap();
  await expect(page.getByLabel('Bracket (take profit and stop loss on the fill)')).toBeChecked();
  await page.getByLabel('Take profit', { exact: true }).fill(ORDER.takeProfit);
  await page.getByLabel('Stop loss', { exact: true }).fill(ORDER.stopLoss);
  // What it costs, under the form on a phone (50 × 78 USDT and the 0.1 % fee), before it is sent.
  const confirmation = page.getByRole('region', { name: 'Order preview' }).getByTestId('order-confirmation');
  await expect(confirmation).toContainText(`Buy 50.000 ${SYMBOL}`);
  await expect(confirmation).toContainText('3,903.90 USDT');
  const clientOrderId = (await page.getByTestId('client-order-id').textContent()) ?? '';
  expect(clientOrderId).toMatch(/^console-/);
  await page.getByRole('button', { name: 'Place paper order' }).tap();
  await expect(page.getByTestId('done')).toContainText(`Order ${clientOrderId}`);

  // The blotter: the entry rests; its status is a swipe to the right inside the table's own box.
  await go(page, 'Orders');
  const orderList = page.getByRole('region', { name: 'Order list' });
  expect(await orderList.evaluate((box) => box.scrollWidth > box.clientWidth)).toBe(true);
  const entry = page.locator(`[data-testid="order-row"][data-client-order-id="${clientOrderId}"]`);
  const entryStatus = entry.getByTestId('order-status');
  await expect(entryStatus).toHaveText(/^(accepted|open)$/);
  await scrolledTo(entryStatus);
  expect(await orderList.evaluate((box) => box.scrollLeft)).toBeGreaterThan(0);
  // Marked in the page: a reload would lose the mark. Only an order event on the socket can change the row.
  await page.evaluate(() => ((globalThis as { phoneWalkMark?: string }).phoneWalkMark = 'still this page'));
  await setPrice(PRICES.fill);
  await expect(entryStatus).toHaveText('filled');
  await expect(entryStatus).toBeInViewport();
  // The fill places the bracket's two legs, listed under their entry.
  const legs = page.locator('[data-testid="order-row"][data-under-entry]');
  await expect(legs).toHaveCount(2);
  await expect(legs.getByTestId('order-status')).toHaveText(['open', 'open']);
  expect(await page.evaluate(() => (globalThis as { phoneWalkMark?: string }).phoneWalkMark)).toBe('still this page');

  // The price rises; the position is closed at market from its row's button, at the row's far end.
  await setPrice(PRICES.close);
  await go(page, 'Positions');
  const position = page.locator(`[data-testid="position-row"][data-symbol="${SYMBOL}"]`);
  await expect(position.getByTestId('position-qty')).toHaveText('50.000');
  const close = position.getByRole('button', { name: 'Close' });
  await scrolledTo(close);
  await close.tap();
  await expect(page.getByTestId('done')).toContainText(`sell 50.000 ${SYMBOL} at market (paper)`);
  await expect(page.getByTestId('no-positions')).toBeVisible();

  // Closing ended the bracket's legs with it.
  await go(page, 'Orders');
  await expect(legs.getByTestId('order-status')).toHaveText(['canceled', 'canceled']);

  // The day's P&L on the overview, as the account reports it: a gain (bought at 78 or under, sold near 85).
  await go(page, 'Overview');
  const dayPnl = page.getByTestId('account-crypto').getByTestId('day-pnl');
  await scrolledTo(dayPnl);
  const userToken = await tokenOf({ username, password: passwordOf(username) });
  const account = await api('GET', '/api/equity/account?asset_class=crypto&mode=paper', undefined, userToken);
  const dayPnlPct = Number((account.metadata as { day_pnl_pct?: number | null }).day_pnl_pct);
  expect(dayPnlPct).toBeGreaterThan(0);
  await expect(dayPnl).toContainText(/^▲ \+\d+\.\d{2} %/);
  await expect(dayPnl).toHaveClass(/\bgain\b/);
  // The figure is the account's, rounded to two decimals of a percent.
  const shown = Number(/\+(\d+\.\d{2}) %/.exec((await dayPnl.textContent()) ?? '')?.[1]);
  expect(Math.abs(shown - dayPnlPct * 100)).toBeLessThanOrEqual(0.005 + 1e-9);

  expect(errors).toEqual([]);
  await context.close();
});

/** The page's own width: wider than the phone's screen means the whole page scrolls sideways. */
const pageWidth = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);

// A table's visually hidden "Actions" header is positioned absolutely: placed against the page
// rather than its table's scroll box, it stretched every page with such a table past the phone's
// width. Each page is checked once its table (or its empty state) is there, not after a wait.
test('on a phone: no page is wider than the screen', async ({ browser }) => {
  const { context, page, errors, username } = await register(browser, 'e2e_phone_width', baseUrl(), { phone: true });
  // A key and a filled market order, so the keys, orders and positions pages have their tables
  // (each with its actions column). The specs run one at a time: the walk's symbol is free here.
  const token = await tokenOf({ username, password: passwordOf(username) });
  await api('POST', '/api/exchange-keys', { exchange: 'crypto_exchange', api_key: `e2e-phone-width-${username}`, api_secret: 'e2e-secret-value' }, token);
  await setPrice(PRICES.start);
  await api('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: SYMBOL, side: 'buy', qty: 1, order_type: 'market', client_order_id: 'e2e-phone-width-1' }, token);

  const actions = page.locator('th', { hasText: /^Actions$/ }).first();
  for (const [title, ready] of [
    ['Overview', page.getByTestId('latest-fills')],
    ['Orders', page.getByTestId('order-row').first()],
    ['Positions', page.locator(`[data-testid="position-row"][data-symbol="${SYMBOL}"]`)],
    ['Portfolio', page.getByTestId('ledger-row').first()],
    ['Exchange keys', actions],
    ['Settings', actions],
    ['Analysis', page.getByTestId('no-reports')],
    ['Backtests', page.getByTestId('no-backtests')],
  ] as const) {
    await go(page, title);
    await expect(ready).toBeAttached();
    expect(await pageWidth(page), title).toBeLessThanOrEqual(PHONE.viewport.width);
  }
  expect(errors).toEqual([]);
  await context.close();

  // The operator's page, as the operator.
  const operator = await browser.newContext({ baseURL: baseUrl(), ...PHONE });
  const adminPage = await operator.newPage();
  await adminPage.goto('/app/signin');
  await adminPage.getByLabel('Username').fill(E2E_ADMIN.username);
  await adminPage.getByLabel('Password').fill(E2E_ADMIN.password);
  await adminPage.getByRole('button', { name: 'Sign in' }).tap();
  await expect(adminPage.getByRole('heading', { name: 'Overview', level: 1 })).toBeInViewport();
  await go(adminPage, 'Operator');
  await expect(adminPage.getByTestId('user-row').first()).toBeAttached();
  await expect(adminPage.locator('th', { hasText: /^Actions$/ }).first()).toBeAttached();
  expect(await pageWidth(adminPage), 'Operator').toBeLessThanOrEqual(PHONE.viewport.width);
  await operator.close();
});
