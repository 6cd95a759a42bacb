// The console's accessibility check (issue 34): axe-core, through @axe-core/playwright, on every
// page of the console (signed out, signed in as a user, as an operator, at a phone's width, and
// every page again in the dark theme), with no serious or critical WCAG 2.0/2.1 A and AA
// violation allowed. One test per page, so a
// failure names its page and the message names the rule and the elements to fix.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { addCryptoKey, api, baseUrl, go, passwordOf, register, signInAsAdmin, tokenOf } from './helpers.ts';

const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const BLOCKING = new Set(['serious', 'critical']);

/** The page's serious and critical violations, one line each: rule, impact, the first few targets. */
const blockingViolations = async (page: Page): Promise<string[]> => {
  const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  return results.violations
    .filter((violation) => BLOCKING.has(violation.impact ?? ''))
    .map((violation) => {
      const targets = violation.nodes.slice(0, 3).map((node) => node.target.join(' '));
      const more = violation.nodes.length > 3 ? ` (+${violation.nodes.length - 3} more)` : '';
      return `${violation.id} [${violation.impact}] ${violation.help}: ${targets.join(', ')}${more}`;
    });
};

const expectAccessible = async (page: Page, where: string) => {
  const violations = await blockingViolations(page);
  expect(violations, `${where}: serious or critical axe violations\n${violations.join('\n')}`).toEqual([]);
};

/**
 * Every page of the navigation by its title, as a user sees it (the operator's page apart), with
 * what shows its data has arrived: axe checks what is there, so a table scanned before its rows
 * is a different page from the one people read.
 */
const USER_PAGES: [title: string, ready?: string][] = [
  ['Overview', 'latest-fill'],
  ['Order ticket', 'client-order-id'],
  ['Orders', 'order-row'],
  ['Positions', 'position-row'],
  ['Exchange keys'],
  ['Chart'],
  ['Backtests'],
  ['Analysis'],
  ['Bot'],
  ['Live trading', 'live-crypto'],
  ['Settings'],
];

/** Every page is on the design system's components: each is checked again in the dark theme (its own colours). */
const DARK_PAGES = USER_PAGES;

/** The header's (or the sign-in page's) switch to the dark theme, and the page in it. */
const switchToDark = async (page: Page) => {
  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
};

const open = async (page: Page, title: string, ready?: string) => {
  await go(page, title);
  if (ready) await expect(page.getByTestId(ready).first()).toBeVisible();
};

/** A user with a paper key and one filled order, so the overview, orders and positions have rows. */
const traderWithAFill = async (browser: Browser, prefix: string) => {
  const trader = await register(browser, prefix);
  await addCryptoKey(trader.page);
  const token = await tokenOf({ username: trader.username, password: passwordOf(trader.username) });
  const placed = await api('POST', '/api/equity/orders', { asset_class: 'crypto', order_type: 'market', symbol: 'BTC/USDT', side: 'buy', qty: 0.01 }, token);
  await expect
    .poll(async () => (await api('GET', `/api/equity/orders/${String(placed.broker_order_id)}?asset_class=crypto&symbol=${encodeURIComponent('BTC/USDT')}`, undefined, token)).status)
    .toBe('filled');
  return trader;
};

// The check itself: a page with a known fault must fail it, or the passes below would prove nothing.
test('the check reports an unlabelled input and low-contrast text', async ({ page }) => {
  await page.goto(`${baseUrl()}/app/signin`);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await page.locator('section').first().evaluate((section) => {
    const input = section.ownerDocument.createElement('input');
    const faint = section.ownerDocument.createElement('p');
    faint.textContent = 'faint';
    // Through the CSSOM: the console's CSP refuses inline style attributes.
    faint.style.color = '#bbb';
    faint.style.background = '#fff';
    section.append(input, faint);
  });
  const rules = (await blockingViolations(page)).map((line) => line.split(' ')[0]);
  expect(rules).toEqual(expect.arrayContaining(['label', 'color-contrast']));
});

test.describe('signed out', () => {
  for (const [path, heading] of [
    ['/app/signin', 'Sign in'],
    ['/app/register', 'Register'],
  ] as const) {
    test(`${path} has no serious or critical axe violation`, async ({ page }) => {
      await page.goto(`${baseUrl()}${path}`);
      await expect(page.getByRole('heading', { name: heading })).toBeVisible();
      await expectAccessible(page, path);
    });
  }
});

test.describe('signed in as a user', () => {
  // One registered user for every page of this block: registering is the slow part.
  test.describe.configure({ mode: 'serial' });
  let context: BrowserContext;
  let page: Page;
  test.beforeAll(async ({ browser }) => {
    ({ context, page } = await traderWithAFill(browser, 'e2e_axe'));
  });
  test.afterAll(async () => context.close());

  for (const [title, ready] of USER_PAGES) {
    test(`${title} has no serious or critical axe violation`, async () => {
      await open(page, title, ready);
      await expectAccessible(page, title);
    });
  }

  // The socket states other than live pass too quickly to be scanned as they come: each state's
  // class is put on the status bar's socket text in turn and the bar checked (its colours).
  for (const state of ['connecting', 'waiting', 'open', 'closed', 'off']) {
    test(`the status bar's "${state}" socket colour has no serious or critical axe violation`, async () => {
      await open(page, 'Overview', 'latest-fill');
      await page.getByTestId('feed-state').evaluate((element, name) => element.setAttribute('class', `feed feed-${name}`), state);
      const results = await new AxeBuilder({ page }).include('[data-testid="status-bar"]').withTags(WCAG_TAGS).analyze();
      const contrast = results.violations.filter((violation) => violation.id === 'color-contrast').flatMap((violation) => violation.nodes.map((node) => node.failureSummary ?? ''));
      expect(contrast, `feed-${state}`).toEqual([]);
    });
  }

  test('a backtest result has no serious or critical axe violation', async () => {
    await go(page, 'Backtests');
    const form = page.getByTestId('backtest-form');
    await form.getByLabel('Asset class').selectOption('us_equity');
    await form.getByLabel('Symbol').selectOption('AAPL');
    await form.getByLabel('Strategy').selectOption('sma_crossover');
    await form.locator('input[name="param.fast"]').fill('5');
    await form.locator('input[name="param.slow"]').fill('20');
    await form.getByLabel('Start date').fill('2025-01-01');
    await form.getByLabel('End date').fill('2025-10-27');
    await form.getByLabel('Initial capital').fill('10000');
    await form.getByRole('button', { name: 'Run backtest' }).click();
    const result = page.getByTestId('backtest-result');
    await expect(result.getByTestId('equity-chart').locator('canvas').first()).toBeVisible();
    await expect(page.getByTestId('backtest-history-row')).toHaveCount(1);
    await expectAccessible(page, 'backtest result');
  });

  test('an analysis report has no serious or critical axe violation', async () => {
    await go(page, 'Analysis');
    await page.getByLabel('Symbol').fill('AAPL');
    await page.getByLabel('Depth').selectOption('quick');
    await page.getByRole('button', { name: 'Analyse' }).click();
    const report = page.getByTestId('report');
    await expect(report.getByTestId('report-status')).toHaveText('done');
    await expect(page.getByTestId('report-row')).toHaveCount(1);
    await expectAccessible(page, 'analysis report');
  });
});

// A new user's overview: its fills table empty, a row saying so under the headers.
test('an empty Overview has no serious or critical axe violation', async ({ browser }) => {
  const { context, page } = await register(browser, 'e2e_axe_new');
  await expect(page.getByTestId('no-fills')).toBeVisible();
  await expectAccessible(page, 'empty Overview');
  await context.close();
});

test.describe('signed in as an operator', () => {
  test('Operator has no serious or critical axe violation', async ({ browser }) => {
    const { context, page } = await signInAsAdmin(browser);
    await go(page, 'Operator');
    await expect(page.getByTestId('halt-state')).toBeVisible();
    await expectAccessible(page, 'Operator');
    await context.close();
  });
});

test.describe('signed in as an operator, in the dark theme', () => {
  test('Operator in the dark theme has no serious or critical axe violation', async ({ browser }) => {
    const { context, page } = await signInAsAdmin(browser);
    await go(page, 'Operator');
    await expect(page.getByTestId('halt-state')).toBeVisible();
    await switchToDark(page);
    await expectAccessible(page, 'Operator (dark)');
    await context.close();
  });
});

test.describe('in the dark theme', () => {
  test.describe.configure({ mode: 'serial' });
  let context: BrowserContext;
  let page: Page;
  test.beforeAll(async ({ browser }) => {
    ({ context, page } = await traderWithAFill(browser, 'e2e_axe_dark'));
    await switchToDark(page);
  });
  test.afterAll(async () => context.close());

  for (const [title, ready] of DARK_PAGES) {
    test(`${title} in the dark theme has no serious or critical axe violation`, async () => {
      await open(page, title, ready);
      await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
      await expectAccessible(page, `${title} (dark)`);
    });
  }

  for (const state of ['connecting', 'waiting', 'open', 'closed', 'off']) {
    test(`the status bar's "${state}" socket colour in the dark theme has no serious or critical axe violation`, async () => {
      await open(page, 'Overview', 'latest-fill');
      await page.getByTestId('feed-state').evaluate((element, name) => element.setAttribute('class', `feed feed-${name}`), state);
      const results = await new AxeBuilder({ page }).include('[data-testid="status-bar"]').withTags(WCAG_TAGS).analyze();
      const contrast = results.violations.filter((violation) => violation.id === 'color-contrast').flatMap((violation) => violation.nodes.map((node) => node.failureSummary ?? ''));
      expect(contrast, `feed-${state} (dark)`).toEqual([]);
    });
  }

  for (const [path, heading] of [
    ['/app/signin', 'Sign in'],
    ['/app/register', 'Register'],
  ] as const) {
    test(`${path} in the dark theme has no serious or critical axe violation`, async ({ page: signedOut }) => {
      await signedOut.goto(`${baseUrl()}${path}`);
      await expect(signedOut.getByRole('heading', { name: heading })).toBeVisible();
      await switchToDark(signedOut);
      await expectAccessible(signedOut, `${path} (dark)`);
    });
  }
});

test.describe("at a phone's width (390×844)", () => {
  test.describe.configure({ mode: 'serial' });
  let context: BrowserContext;
  let page: Page;
  test.beforeAll(async ({ browser }) => {
    ({ context, page } = await traderWithAFill(browser, 'e2e_axe_phone'));
    await page.setViewportSize({ width: 390, height: 844 });
  });
  test.afterAll(async () => context.close());

  for (const [title, ready] of USER_PAGES.slice(0, 4)) {
    test(`${title} on a phone has no serious or critical axe violation`, async () => {
      await open(page, title, ready);
      await expectAccessible(page, `${title} (390×844)`);
    });
  }
});
