// Live trading and operations end to end: the promotion wizard to live with the confirm token read
// from the service's log (no SMTP here), a price crash that locks an account and an operator who
// clears the lock from the console, the halt set and lifted from the console, and a key tested,
// deactivated, activated and deleted.
import { readFileSync } from 'node:fs';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { E2E_ADMIN } from './global-setup.ts';
import { addCryptoKey, api, baseUrl, go, passwordOf, register, signInAsAdmin, tokenOf, watchErrors } from './helpers.ts';

/** Script errors only: while the service is halted, the page's own reads answer 503 on purpose. */
const scriptErrors = (errors: string[]) => errors.filter((error) => error.startsWith('pageerror'));

const signInAsOperator = async (browser: Browser): Promise<Page> => {
  const { page } = await signInAsAdmin(browser);
  await go(page, 'Operator');
  return page;
};

/** A market order through the API, waited for until it is filled. */
const fillOrder = async (token: string, order: { symbol: string; side: 'buy' | 'sell'; qty: number }) => {
  const placed = await api('POST', '/api/equity/orders', { asset_class: 'crypto', order_type: 'market', ...order }, token);
  await expect
    .poll(async () => (await api('GET', `/api/equity/orders/${String(placed.broker_order_id)}?asset_class=crypto&symbol=${encodeURIComponent(order.symbol)}`, undefined, token)).status)
    .toBe('filled');
};

/** The confirm token the service logged for `userId` (it has no SMTP settings in this run). */
const loggedConfirmToken = (userId: number): string | undefined => {
  const file = process.env.E2E_SERVICE_LOG;
  if (!file) throw new Error('E2E_SERVICE_LOG is not set: run the tests through playwright.config.ts');
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('live_confirm_token'))
    .map((line) => JSON.parse(line) as { live_confirm_token?: string; userId?: number });
  return entries.filter((entry) => entry.userId === userId).at(-1)?.live_confirm_token;
};

test('the promotion wizard takes a user with a paper record to live, with the token the service logged', async ({ browser }) => {
  const { page, errors, username } = await register(browser, 'e2e_promo');
  await addCryptoKey(page);
  const token = await tokenOf({ username, password: passwordOf(username) });
  const me = await api('GET', '/api/auth/me', undefined, token);
  await fillOrder(token, { symbol: 'BTC/USDT', side: 'buy', qty: 0.001 });

  await go(page, 'Live trading');
  await expect(page.getByTestId('live-crypto').getByTestId('live-enabled')).toHaveText('paper only');
  // This service runs without FEATURE_EQUITY_LIVE and ALLOW_LIVE: the page says what still blocks.
  await expect(page.getByTestId('live-blockers')).toContainText('FEATURE_EQUITY_LIVE');
  await page.getByTestId('check-readiness').click();
  await expect(page.getByTestId('readiness')).toContainText('Ready');
  await page.getByTestId('issue-token').click();
  await expect(page.getByTestId('token-issued')).toContainText('service log');
  let confirmToken: string | undefined;
  await expect.poll(() => (confirmToken = loggedConfirmToken(Number(me.id)))).toBeTruthy();
  await page.getByLabel('Confirm token').fill(confirmToken!);
  await page.getByRole('button', { name: 'Enable live trading' }).click();
  await expect(page.getByTestId('done')).toContainText('Live trading is enabled for Crypto');
  await expect(page.getByTestId('live-crypto').getByTestId('live-enabled')).toHaveText('enabled');
  // The kill switch's panel lists the live account under the paper one, each labelled.
  await expect(page.getByTestId('risk-crypto')).toContainText('Crypto (paper)');
  await expect(page.getByTestId('risk-crypto-live')).toContainText('Crypto (live)');
  // The overview now has the live crypto account beside the paper one.
  await go(page, 'Overview');
  await expect(page.getByTestId('account-crypto-live').getByTestId('mode')).toHaveText('live');
  await expect(page.getByTestId('account-crypto-live').getByTestId('equity')).toContainText('USDT');
  expect(errors).toEqual([]);
});

test('a price crash locks the account, the user sees the lock, and an operator clears it from the console', async ({ browser }) => {
  const { page, errors, username } = await register(browser, 'e2e_crash');
  await addCryptoKey(page);
  const token = await tokenOf({ username, password: passwordOf(username) });
  const adminToken = await tokenOf(E2E_ADMIN);
  // SOL/USDT is this test's own symbol: no other test holds it.
  await api('POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'SOL/USDT', price: 100 }, adminToken);
  await fillOrder(token, { symbol: 'SOL/USDT', side: 'buy', qty: 350 });
  await api('POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'SOL/USDT', price: 50 }, adminToken);
  // A fill after the crash has the kill switch look at the account (a sell: buys are refused by now).
  await fillOrder(token, { symbol: 'SOL/USDT', side: 'sell', qty: 1 });
  await expect.poll(async () => ((await api('GET', '/api/operations/live/status', undefined, token)).crypto as { locked_until: string | null }).locked_until).not.toBeNull();

  await go(page, 'Live trading');
  await expect(page.getByTestId('live-crypto').getByTestId('lock')).toContainText('locked until');
  // 350 SOL bought at 100 and marked at 50: the day is at about -17.5 %, past the lock line.
  await expect(page.getByTestId('risk-crypto').getByTestId('risk-state')).toHaveText('at the lock line');

  // The overview shows the day against the lines and the fills.
  await go(page, 'Overview');
  await expect(page.getByTestId('account-crypto').getByTestId('day-pnl')).toContainText('at the lock line');
  await expect(page.getByTestId('latest-fill').filter({ hasText: 'SOL/USDT' })).toHaveCount(2);
  // Newest first: the sell after the crash above the buy.
  await expect(page.getByTestId('latest-fill').first()).toContainText('sell');
  const fillTimes = await page.getByTestId('latest-fill').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-updated-at') ?? ''));
  expect(fillTimes).toEqual([...fillTimes].sort().reverse());
  // The status bar: both sockets (the overview listens to /ws/live for signals) and the flags.
  await expect(page.getByTestId('feed-state')).toHaveText('orders socket: live');
  await expect(page.getByTestId('live-socket-state')).toHaveText('live socket: live');
  await expect(page.getByTestId('flags')).toContainText('paper orders on, live orders off');

  const operator = await signInAsOperator(browser);
  // The alerts name the user by its username, as the other lists do.
  const alerts = operator.getByTestId('alert-row').filter({ hasText: username });
  await expect(alerts.filter({ has: operator.getByTestId('alert-kind').getByText('lock', { exact: true }) })).toHaveCount(1);
  await operator.getByTestId('user-row').filter({ hasText: username }).getByTestId('user-details').click();
  await expect(operator.getByTestId('user-detail').getByTestId('detail-crypto').getByTestId('detail-lock')).toContainText('until');
  const lockRow = operator.getByTestId('lock-row').filter({ hasText: username });
  await expect(lockRow).toHaveCount(1);
  await lockRow.getByTestId('clear-lock').click();
  await expect(operator.getByTestId('done')).toContainText('cleared');
  await expect(lockRow).toHaveCount(0);
  await expect(operator.getByTestId('user-detail').getByTestId('detail-crypto').getByTestId('detail-lock')).toHaveText('none');

  await go(page, 'Live trading');
  await page.reload();
  await expect(page.getByTestId('live-crypto').getByTestId('lock')).toHaveText('none');
  expect(errors).toEqual([]);
});

test('an operator halts the service and lifts the halt from the console', async ({ browser }) => {
  const operator = await signInAsOperator(browser);
  const errors = watchErrors(operator);
  await expect(operator.getByTestId('halt-state')).toHaveText('running');
  await operator.getByTestId('halt-toggle').click();
  await expect(operator.getByTestId('halt-banner')).toBeVisible();
  await expect(operator.getByTestId('halt-state')).toContainText('halted since');
  expect((await fetch(`${baseUrl()}/health`).then((response) => response.json())) as { halted: boolean }).toMatchObject({ halted: true });
  // The console stays served while halted, so the halt can be lifted from it.
  await operator.reload();
  await expect(operator.getByRole('heading', { name: 'Operator' })).toBeVisible();
  await operator.getByTestId('halt-toggle').click();
  await expect(operator.getByTestId('halt-state')).toHaveText('running');
  await expect(operator.getByTestId('halt-banner')).toHaveCount(0);
  expect((await fetch(`${baseUrl()}/health`).then((response) => response.json())) as { halted: boolean }).toMatchObject({ halted: false });
  expect(scriptErrors(errors)).toEqual([]);
});

/**
 * What sticks out of the operator's cards: a card wider than the page, or a form control outside
 * its card (a table wider than a phone scrolls inside its card instead).
 */
const overflowingControls = (page: Page) =>
  page.locator('main .card').evaluateAll(
    (cards, pageWidth) =>
      cards.flatMap((card) => {
        const box = card.getBoundingClientRect();
        if (box.right > pageWidth + 0.5) return [`${card.getAttribute('data-testid') ?? '?'} is wider than the page`];
        return [...card.querySelectorAll('form input, form select, form button, label input, label select')]
          .filter((control) => {
            const own = control.getBoundingClientRect();
            return own.width > 0 && (own.left < box.left - 0.5 || own.right > box.right + 0.5);
          })
          .map((control) => `${card.getAttribute('data-testid') ?? '?'}: ${control.getAttribute('name') ?? control.textContent ?? control.tagName}`);
      }),
    page.viewportSize()?.width ?? Number.POSITIVE_INFINITY,
  );

test('the operator page keeps every form row inside its card, and the header its links, on a desktop and at a phone’s 390 px', async ({ browser }) => {
  const operator = await signInAsOperator(browser);
  await expect(operator.getByTestId('instrument-form')).toBeVisible();
  expect(await overflowingControls(operator)).toEqual([]);
  await operator.setViewportSize({ width: 390, height: 844 });
  await expect(operator.getByTestId('bars-form')).toBeVisible();
  expect(await overflowingControls(operator)).toEqual([]);
  // The header's links (the operator sees them all) wrap onto more lines instead of running off the screen.
  const header = await operator.locator('header').evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth, right: element.getBoundingClientRect().right }));
  expect(header.scroll).toBeLessThanOrEqual(header.client);
  expect(header.right).toBeLessThanOrEqual(390);
});

test('a key is tested without being saved, then added, deactivated, activated and deleted', async ({ browser }) => {
  const { page, errors } = await register(browser, 'e2e_keys');
  await go(page, 'Exchange keys');
  await page.getByLabel('API key').fill(`e2e-keys-${Date.now()}`);
  await page.getByLabel('API secret').fill('e2e-secret-value');
  await page.getByTestId('test-key').click();
  await expect(page.getByTestId('key-test-result')).toContainText('The broker answers');
  await expect(page.getByTestId('no-keys')).toBeVisible();
  await page.getByRole('button', { name: 'Add paper key' }).click();
  const row = page.getByTestId('key-row');
  await expect(row).toHaveCount(1);
  await row.getByTestId('key-toggle').click();
  await expect(row.getByTestId('key-toggle')).toHaveText('Activate');
  await row.getByTestId('key-toggle').click();
  await expect(row.getByTestId('key-toggle')).toHaveText('Deactivate');
  page.once('dialog', (dialog) => void dialog.accept());
  await row.getByTestId('key-delete').click();
  await expect(page.getByTestId('no-keys')).toBeVisible();
  expect(errors).toEqual([]);
});

test('the ticket follows the symbol, places a bracket limit order and says which gate refuses; the blotter replaces, shows the timeline and cancels all', async ({ browser }) => {
  const { page, errors, username } = await register(browser, 'e2e_ticket');
  await addCryptoKey(page);
  await go(page, 'Order ticket');
  const assetClass = page.getByTestId('ticket').getByLabel('Asset class');
  await page.getByLabel('Symbol').fill('AAPL');
  await expect(assetClass).toHaveValue('us_equity');
  await page.getByLabel('Symbol').fill('005930');
  await expect(assetClass).toHaveValue('kr_equity');
  await page.getByLabel('Symbol').fill('ETH/USDT');
  await expect(assetClass).toHaveValue('crypto');

  // Far below the price: it rests; its bracket waits for the fill.
  await page.getByLabel('Quantity').fill('0.01');
  await page.getByLabel('Type').selectOption('limit');
  await page.getByLabel('Limit price').fill('1000');
  await page.getByLabel('Time in force').selectOption('gtc');
  await page.getByLabel('Bracket').check();
  await page.getByLabel('Take profit', { exact: true }).fill('5000');
  await page.getByLabel('Stop loss', { exact: true }).fill('900');
  await page.getByRole('button', { name: 'Place paper order' }).click();
  // The order type once, the price to the tick (ETH/USDT: 0.01), the quantity to the lot (0.0001).
  await expect(page.getByTestId('done')).toContainText('buy 0.0100 ETH/USDT limit 1,000.00 USDT (paper)');

  // A buy far beyond what the account may risk: refused by the risk manager, and said so.
  await page.getByRole('button', { name: 'New ticket' }).click();
  await page.getByLabel('Bracket').uncheck();
  await page.getByLabel('Type').selectOption('market');
  await page.getByLabel('Quantity').fill('1000');
  await page.getByRole('button', { name: 'Place paper order' }).click();
  await expect(page.getByTestId('refused-gate')).toContainText('gate 4');

  await go(page, 'Orders');
  const row = page.getByTestId('order-row').filter({ hasText: 'ETH/USDT' });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('order-status')).toHaveText(/^(accepted|open)$/);
  await expect(row.getByTestId('order-type')).toHaveText('limit 1,000.00 USDT');
  await row.getByTestId('order-timeline-toggle').click();
  await expect(page.getByTestId('timeline-entry').filter({ hasText: 'placed' })).toHaveCount(1);
  await expect(page.getByTestId('timeline-entry').filter({ hasText: 'accepted' })).toHaveCount(1);
  await row.getByTestId('order-replace-toggle').click();
  await page.getByTestId('replace-form').getByLabel('New quantity').fill('0.02');
  await page.getByTestId('replace-form').getByRole('button', { name: 'Replace' }).click();
  await expect(row.getByTestId('order-qty')).toHaveText('0.0200');
  await page.getByTestId('cancel-all').click();
  await expect(page.getByTestId('done')).toContainText('1 order(s) canceled');
  await expect(row.getByTestId('order-status')).toHaveText('canceled');

  // A bracket whose entry fills: its take-profit and stop-loss legs sit under it, labelled, and
  // each order says who placed it (the API, like the console's ticket; a leg, its entry's).
  const token = await tokenOf({ username, password: passwordOf(username) });
  const entryId = `e2e-bracket-${Date.now().toString(36)}`;
  await api('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', client_order_id: entryId, bracket: { take_profit: 100_000, stop_loss: 10_000 } }, token);
  await expect.poll(async () => ((await api('GET', '/api/equity/orders?asset_class=crypto&status=open', undefined, token)).items as { client_order_id: string }[]).length).toBe(2);
  await page.reload();
  const entry = page.locator(`[data-testid="order-row"][data-client-order-id="${entryId}"]`);
  await expect(entry.getByTestId('order-source')).toHaveText('api');
  await expect(entry.getByTestId('order-leg')).toHaveCount(0);
  await expect(page.locator(`[data-client-order-id="${entryId}:tp"][data-under-entry]`).getByTestId('order-leg')).toHaveText('take-profit leg');
  await expect(page.locator(`[data-client-order-id="${entryId}:sl"][data-under-entry]`).getByTestId('order-leg')).toHaveText('stop-loss leg');
  await expect(page.locator(`[data-client-order-id="${entryId}:sl"]`).getByTestId('order-source')).toHaveText('api');
  const shown = await page.getByTestId('order-row').evaluateAll((rows) => rows.map((each) => each.getAttribute('data-client-order-id')));
  const at = shown.indexOf(entryId);
  expect(shown.slice(at + 1, at + 3).sort()).toEqual([`${entryId}:sl`, `${entryId}:tp`]);
  expect(errors).toEqual([]);
});

test('the ticket places a trailing stop, a bracket whose stop leg trails and an oco; the blotter shows each leg under its order', async ({ browser }) => {
  const { page, errors, username } = await register(browser, 'e2e_advanced');
  await addCryptoKey(page);
  const token = await tokenOf({ username, password: passwordOf(username) });
  await fillOrder(token, { symbol: 'BTC/USDT', side: 'buy', qty: 0.002 });
  await go(page, 'Order ticket');
  await page.getByLabel('Symbol').fill('BTC/USDT');
  await page.getByLabel('Quantity').fill('0.001');

  // A trailing sell stop, 5 % below the price: its broker sets the stop.
  await page.getByLabel('Side').selectOption('sell');
  await page.getByLabel('Type').selectOption('trailing_stop');
  await expect(page.getByLabel('Bracket (take profit and stop loss on the fill)')).toBeDisabled();
  await page.getByLabel('Trail (%)').fill('5');
  await page.getByLabel('Time in force').selectOption('gtc');
  await page.getByRole('button', { name: 'Place paper order' }).click();
  await expect(page.getByTestId('done')).toContainText('sell 0.00100 BTC/USDT trailing stop');

  // An oco on the rest: a sell limit far above, with a stop leg trailing 10 %.
  await page.getByRole('button', { name: 'New ticket' }).click();
  await page.getByLabel('Type').selectOption('limit');
  await page.getByLabel('Limit price').fill('500000');
  await page.getByLabel('Bracket (take profit and stop loss on the fill)').check();
  await page.getByLabel('Exit legs').selectOption('oco');
  await expect(page.getByLabel('Take profit', { exact: true })).toHaveCount(0);
  await page.getByLabel('Stop leg').selectOption('trail_percent');
  await page.getByLabel('Stop trails by (%)').fill('10');
  await page.getByRole('button', { name: 'Place paper order' }).click();
  await expect(page.getByTestId('done')).toContainText('sell 0.00100 BTC/USDT limit 500,000.00 USDT');

  // A buy whose stop leg trails 3 % from its fill, with a take profit.
  await page.getByRole('button', { name: 'New ticket' }).click();
  await page.getByLabel('Side').selectOption('buy');
  await page.getByLabel('Type').selectOption('market');
  await page.getByLabel('Exit legs').selectOption('bracket');
  await page.getByLabel('Take profit', { exact: true }).fill('500000');
  await page.getByLabel('Stop trails by (%)').fill('3');
  await page.getByRole('button', { name: 'Place paper order' }).click();
  await expect(page.getByTestId('done')).toContainText('buy 0.00100 BTC/USDT market');

  const open = async () => ((await api('GET', '/api/equity/orders?asset_class=crypto&status=open&size=100', undefined, token)).items as { client_order_id: string; order_type: string }[]).map((order) => order.order_type).sort();
  // The trailing stop; the oco's limit and its trailing leg; the bracket's take-profit and trailing leg.
  await expect.poll(open).toEqual(['limit', 'limit', 'trailing_stop', 'trailing_stop', 'trailing_stop']);
  await go(page, 'Orders');
  await expect(page.getByTestId('order-row').getByTestId('order-type').filter({ hasText: /^trailing stop / })).toHaveCount(3);
  await expect(page.locator('[data-under-entry]').getByTestId('order-leg').filter({ hasText: 'stop-loss leg' })).toHaveCount(2);
  expect(errors).toEqual([]);
});
