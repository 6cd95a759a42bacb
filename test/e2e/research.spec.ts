// The research and bot pages end to end (chart, backtests, analysis, bot) against the real
// service of global-setup.ts: its loaded bars and its fake LLM, whose answers carry markup.
import { expect, test } from '@playwright/test';
import { BAR_COUNT, E2E_ADMIN } from './global-setup.ts';
import { addCryptoKey, api, baseUrl, go, passwordOf, register, tokenOf, watchErrors } from './helpers.ts';

const ROUTES = [
  ['/app/chart', 'Chart'],
  ['/app/backtests', 'Backtests'],
  ['/app/analysis', 'Analysis'],
  ['/app/bot', 'Bot'],
] as const;

test('signed out, the research routes redirect to sign-in', async ({ page }) => {
  const errors = watchErrors(page);
  for (const [route] of ROUTES) {
    await page.goto(`${baseUrl()}${route}`);
    await expect(page).toHaveURL(`${baseUrl()}/app/signin`);
  }
  expect(errors).toEqual([]);
});

test('signed in, every research route loads, by link and by a fresh load, without a page or CSP error', async ({ browser }) => {
  const { context, page, errors } = await register(browser, 'e2e_routes');
  for (const [route, title] of ROUTES) {
    await go(page, title);
    await page.goto(route);
    await expect(page.getByRole('heading', { name: title, level: 1 })).toBeVisible();
  }
  expect(errors).toEqual([]);
  await context.close();
});

test('chart: daily candles, the own fill as a marker, and a tick moving the last price', async ({ browser }) => {
  const { context, page, errors } = await register(browser, 'e2e_chart');
  const admin = await tokenOf(E2E_ADMIN);
  await api('POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'ETH/USDT', price: 3000 }, admin);
  await addCryptoKey(page);
  await go(page, 'Order ticket');
  await page.getByLabel('Symbol').fill('ETH/USDT');
  await page.getByLabel('Quantity').fill('0.1');
  await page.getByRole('button', { name: 'Place paper order' }).click();
  await expect(page.getByTestId('done')).toContainText('ETH/USDT');

  await go(page, 'Chart');
  await page.getByLabel('Symbol').selectOption('ETH/USDT');
  const chart = page.getByTestId('price-chart');
  await expect(chart).toHaveAttribute('data-bars', String(BAR_COUNT));
  await expect(page.getByTestId('chart-fills')).toHaveText('1');
  await expect(chart).toHaveAttribute('data-markers', '1');
  await expect(chart.locator('canvas').first()).toBeVisible();
  await expect(page.getByTestId('chart-summary')).toContainText('prices in USDT');

  await expect(page.getByTestId('live-state')).toHaveText('ticks: live');
  // The socket names its symbols when it subscribes; the price an operator sets is a tick.
  await expect(async () => {
    await api('POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'ETH/USDT', price: 3100 }, admin);
    await expect(page.getByTestId('chart-last')).toHaveText('3,100.00 USDT', { timeout: 1_000 });
  }).toPass({ timeout: 15_000 });
  await expect(chart).toHaveAttribute('data-last', '3100');
  expect(errors).toEqual([]);
  await context.close();
});

test('backtests: the form refuses what the API would, a run shows metrics, charts and fills, two runs compare, a sweep ranks its grid', async ({ browser }) => {
  const { context, page, errors } = await register(browser, 'e2e_backtest');
  await go(page, 'Backtests');
  const form = page.getByTestId('backtest-form');
  await form.getByLabel('Asset class').selectOption('us_equity');
  await form.getByLabel('Symbol').selectOption('AAPL');
  await form.getByLabel('Strategy').selectOption('sma_crossover');
  // Refused in the page: a period below the registry's bound, and an end before the start.
  await form.locator('input[name="param.fast"]').fill('0');
  await form.getByLabel('Start date').fill('2025-06-01');
  await form.getByLabel('End date').fill('2025-01-01');
  await form.getByRole('button', { name: 'Run backtest' }).click();
  await expect(page.getByTestId('field-error-param.fast')).toBeVisible();
  await expect(page.getByTestId('field-error-end_date')).toBeVisible();
  await expect(page.getByTestId('backtest-result')).toHaveCount(0);

  const run = async (fast: string, slow: string) => {
    await form.locator('input[name="param.fast"]').fill(fast);
    await form.locator('input[name="param.slow"]').fill(slow);
    await form.getByLabel('Start date').fill('2025-01-01');
    await form.getByLabel('End date').fill('2025-10-27');
    await form.getByLabel('Initial capital').fill('10000');
    await form.getByRole('button', { name: 'Run backtest' }).click();
    await expect(page.getByTestId('done')).toContainText('saved');
    const result = page.getByTestId('backtest-result');
    await expect(result).toBeVisible();
    return result;
  };
  const result = await run('5', '20');
  await expect(result.getByTestId('metric-cards').locator('.metric')).toHaveCount(10);
  await expect(result.getByTestId('metric-initial_capital')).toContainText('10,000.00 USD');
  await expect(result.getByTestId('mode').first()).toHaveText('backtest');
  const roundTrips = Number(await result.getByTestId('metric-total_trades').locator('.metric-value').textContent());
  expect(roundTrips).toBeGreaterThan(0);
  // trades[] lists fills: a buy and a sell per round trip.
  await expect(result.getByTestId('backtest-trade-row')).toHaveCount(roundTrips * 2);
  await expect(result.getByTestId('equity-chart')).toHaveAttribute('data-points', String(BAR_COUNT));
  await expect(result.getByTestId('equity-chart').locator('canvas').first()).toBeVisible();
  await expect(result.getByTestId('backtest-price-chart')).toHaveAttribute('data-markers', String(roundTrips * 2));
  await expect(result.getByTestId('backtest-price-chart').locator('canvas').first()).toBeVisible();

  await run('10', '30');
  const history = page.getByTestId('backtest-history-row');
  await expect(history).toHaveCount(2);
  await history.nth(0).getByRole('checkbox').check();
  await history.nth(1).getByRole('checkbox').check();
  const compare = page.getByTestId('backtest-compare');
  await expect(compare.getByTestId('compare-total_return_pct').locator('td')).toHaveCount(2);
  await expect(compare.getByTestId('compare-final_capital')).toContainText('USD');

  const sweep = page.getByTestId('sweep-form');
  await sweep.getByLabel('Symbol').selectOption('AAPL');
  await sweep.getByLabel('Strategy').selectOption('sma_crossover');
  await sweep.getByLabel('fast', { exact: true }).fill('5, 10');
  await sweep.getByLabel('slow', { exact: true }).fill('20, 30');
  await sweep.getByLabel('Start date').fill('2025-01-01');
  await sweep.getByLabel('End date').fill('2025-10-27');
  await sweep.getByRole('button', { name: 'Run sweep' }).click();
  await expect(page.getByTestId('sweep-point-row')).toHaveCount(4);
  expect(errors).toEqual([]);
  await context.close();
});

test('analysis: a quick report shows its decision, traces and cost; markup from the model never runs', async ({ browser }) => {
  const { context, page, errors } = await register(browser, 'e2e_analysis');
  await go(page, 'Analysis');
  await page.getByRole('button', { name: 'Analyse' }).click();
  await expect(page.getByTestId('field-error-symbol')).toBeVisible();
  await page.getByLabel('Symbol').fill('AAPL');
  await page.getByLabel('Depth').selectOption('quick');
  await page.getByRole('button', { name: 'Analyse' }).click();
  const report = page.getByTestId('report');
  await expect(report.getByTestId('report-status')).toHaveText('done');
  await expect(report.getByTestId('decision')).toHaveText('buy');
  await expect(report.getByTestId('trace')).toHaveCount(2);
  await expect(report.locator('[data-testid="trace"][data-agent="technical"]')).toHaveCount(1);
  await expect(report.locator('[data-testid="trace"][data-agent="decision"]')).toHaveCount(1);
  await expect(report.getByTestId('cost')).toContainText('USD');
  await expect(report.getByTestId('budget')).toContainText('USD');
  await expect(report.getByTestId('report-decision')).toContainText('150.00 USD');
  // The markup is text in the traces and agent views; the summary's markdown is rendered but sanitised.
  await expect(report.getByTestId('trace-content').first()).toContainText('<script>window.__xss=1</script>');
  await expect(report.getByTestId('agent-technical')).toContainText('<img src=x onerror=');
  await expect(report.getByTestId('report-summary').locator('strong', { hasText: 'bold claim' }).first()).toBeVisible();
  await expect(report.getByTestId('report-summary')).toContainText('<script>window.__xss=1</script>');
  expect(await report.locator('script, img, [onerror]').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
  await expect(page.getByTestId('report-row')).toHaveCount(1);

  // A queued standard report is followed through its report_status frames until a worker has finished it.
  await page.getByLabel('Depth').selectOption('standard');
  await page.getByRole('button', { name: 'Analyse' }).click();
  await expect(page.getByTestId('done')).toContainText('queued');
  // `partial` is a report with a failed call, and a call that hangs fails at LLM_TIMEOUT_MS (30 s
  // by default): the bound must outlast one such call, or a partial report could never be seen
  // here (CI failed once at 30 s with the report still running, beside the PostgreSQL run).
  await expect(report.getByTestId('report-status')).toHaveText(/^(done|partial)$/, { timeout: 90_000 });
  await expect(report.locator('[data-testid="trace"][data-agent="risk"]')).toHaveCount(1);
  // The progress line is only ever drawn from a frame: the frames reached this page.
  await expect(report.getByTestId('report-progress')).toContainText('agent steps done');
  expect(await report.locator('script, img, [onerror]').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
  expect(errors).toEqual([]);
  await context.close();
});

test('bot: start and stop from the page, and an operator stop arriving as a bot_status frame', async ({ browser }) => {
  const { context, page, errors, username } = await register(browser, 'e2e_bot');
  await addCryptoKey(page);
  await go(page, 'Bot');
  await expect(page.getByTestId('bot-state')).toHaveText('stopped');
  const form = page.getByTestId('bot-form');
  // The form is whole once the strategies have arrived (the first is chosen): a click before that
  // could land on a form still being drawn.
  await expect(form.getByLabel('Strategy')).toHaveValue('buy_and_hold');
  // Refused in the page: no symbol.
  await form.getByRole('button', { name: 'Start bot' }).click();
  await expect(page.getByTestId('field-error-symbols')).toBeVisible();

  const start = async () => {
    await form.getByLabel('Symbols').fill('BTC/USDT');
    await form.getByLabel('Strategy').selectOption('sma_crossover');
    await form.locator('input[name="param.fast"]').fill('3');
    await form.locator('input[name="param.slow"]').fill('6');
    await form.getByRole('button', { name: 'Start bot' }).click();
    await expect(page.getByTestId('bot-state')).toHaveText('running');
  };
  await start();
  await expect(page.getByTestId('done')).toContainText('Bot started: sma_crossover on BTC/USDT (paper)');
  await expect(page.getByTestId('bot-mode').first()).toHaveText('paper');
  await page.getByRole('button', { name: 'Stop bot' }).click();
  await expect(page.getByTestId('bot-state')).toHaveText('stopped');

  await start();
  await expect(page.getByTestId('live-state')).toHaveText('bot socket: live');
  const userToken = await tokenOf({ username, password: passwordOf(username) });
  const me = await api('GET', '/api/auth/me', undefined, userToken);
  await api('POST', `/api/admin/users/${String(me.id)}/bot/stop`, {}, await tokenOf(E2E_ADMIN));
  // No reload: only the frame can change the state shown.
  await expect(page.getByTestId('bot-state')).toHaveText('stopped');
  await expect(page.getByTestId('bot-status')).toContainText('by admin');
  // Both runs are listed, newest first, each ended; a run's drift report replays its bars (none
  // closed in these few seconds: nothing to line up).
  await expect(page.getByTestId('bot-run-row')).toHaveCount(2);
  await expect(page.getByTestId('bot-run-row').first()).toContainText('(admin)');
  await expect(page.getByTestId('bot-run-row').last()).toContainText('(user)');
  await page.getByTestId('bot-run-drift').first().click();
  await expect(page.getByTestId('bot-drift')).toBeVisible();
  await expect(page.getByTestId('drift-gap')).toHaveText('0.00 %');
  await expect(page.getByTestId('no-drift-rows')).toBeVisible();
  expect(errors).toEqual([]);
  await context.close();
});
