// What the console's end-to-end specs share: the service's address, a page's error watch, a user
// registered in a fresh browser context, navigation by the nav bar, a crypto key added in the
// page, the API called directly (for setup an operator or a test does outside the page), and the
// axe check (accessibility.spec.ts, and screenshots.spec.ts on the pages it loads for its shots).
import AxeBuilder from '@axe-core/playwright';
import { expect, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { E2E_ADMIN } from './global-setup.ts';

export const baseUrl = () => {
  const url = process.env.E2E_BASE_URL;
  if (!url) throw new Error('E2E_BASE_URL is not set: run the tests through playwright.config.ts');
  return url;
};

/** Script and console errors (a CSP violation is one); HTTP refusals the page shows itself are not. */
export const watchErrors = (page: Page): string[] => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) errors.push(`console: ${message.text()}`);
  });
  return errors;
};

let counter = 0;
export const passwordOf = (username: string) => `pw-${username}-secret`;

/** A phone's screen (390×844) with touch, as the phone spec uses it. */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } as const;

/**
 * A user registered through the page, in a fresh browser context (on the run's service, or the one
 * at `url`); with `phone`, on a phone's screen, the button tapped and the overview's heading in view.
 */
export const register = async (browser: Browser, prefix: string, url = baseUrl(), { phone = false } = {}) => {
  const context = await browser.newContext({ baseURL: url, ...(phone ? PHONE : {}) });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const username = `${prefix}_${Date.now().toString(36)}_${++counter}`;
  await page.goto('/app/register');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('E-mail').fill(`${username}@example.com`);
  await page.getByLabel('Password').fill(passwordOf(username));
  const button = page.getByRole('button', { name: 'Register' });
  if (phone) {
    await button.tap();
    await expect(page.getByRole('heading', { name: 'Overview', level: 1 })).toBeInViewport();
  } else {
    await button.click();
    await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  }
  return { context, page, errors, username };
};

export const go = async (page: Page, title: string) => {
  await page.getByRole('navigation').getByRole('link', { name: title, exact: true }).click();
  await expect(page.getByRole('heading', { name: title, level: 1 })).toBeVisible();
};

export const addCryptoKey = async (page: Page) => {
  await go(page, 'Exchange keys');
  await page.getByLabel('Label').fill('research key');
  await page.getByLabel('API key').fill(`e2e-research-${Date.now()}-${++counter}`);
  await page.getByLabel('API secret').fill('e2e-secret-value');
  await page.getByRole('button', { name: 'Add paper key' }).click();
  await expect(page.getByTestId('done')).toContainText('added for Crypto (paper)');
};

export const api = async (method: string, path: string, body?: unknown, token?: string) => {
  const response = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
};
export const tokenOf = async (credentials: { username: string; password: string }) => String((await api('POST', '/api/auth/login', credentials)).access_token);

/** A browser context signed in as the service's operator (global-setup's admin), on the Overview. */
export const signInAsAdmin = async (browser: Browser): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext({ baseURL: baseUrl() });
  const page = await context.newPage();
  await page.goto('/app/signin');
  await page.getByLabel('Username').fill(E2E_ADMIN.username);
  await page.getByLabel('Password').fill(E2E_ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  return { context, page };
};

/** The WCAG 2.0/2.1 A and AA rules; a serious or critical violation of one fails the check. */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const BLOCKING = new Set(['serious', 'critical']);

/**
 * axe on the page, in @axe-core/playwright's legacy mode: axe.run in the page itself. Its default
 * runs axe per frame and then opens a blank page in the context (a new renderer) to merge the
 * frames' results, for every scan: all cost for the console, which has no frame, and a second
 * page beside the one a screenshot is taken of. The same rules and tags either way.
 */
export const axeOn = (page: Page) => new AxeBuilder({ page }).setLegacyMode().withTags(WCAG_TAGS);

/** The page's serious and critical violations, one line each: rule, impact, the first few targets. */
export const blockingViolations = async (page: Page): Promise<string[]> => {
  const results = await axeOn(page).analyze();
  return results.violations
    .filter((violation) => BLOCKING.has(violation.impact ?? ''))
    .map((violation) => {
      const targets = violation.nodes.slice(0, 3).map((node) => node.target.join(' '));
      const more = violation.nodes.length > 3 ? ` (+${violation.nodes.length - 3} more)` : '';
      return `${violation.id} [${violation.impact}] ${violation.help}: ${targets.join(', ')}${more}`;
    });
};

/**
 * No serious or critical violation on the page as it is; the message names the page (`where`),
 * the rules and the elements to fix. Soft where one test checks many pages, so each page's
 * violations are reported, not just the first page's.
 */
export const expectAccessible = async (page: Page, where: string, { soft = false } = {}) => {
  const violations = await blockingViolations(page);
  (soft ? expect.soft : expect)(violations, `${where}: serious or critical axe violations\n${violations.join('\n')}`).toEqual([]);
};

/** The orders socket's states other than live: they pass too quickly to be scanned as they come. */
export const SOCKET_STATES = ['connecting', 'waiting', 'open', 'closed', 'off'] as const;

/**
 * Each socket state's colour in the status bar: the state's class put on the bar's socket text in
 * turn and the bar checked for contrast, then the text's own class put back (the page goes on
 * being used, and React writes the class only when the state changes).
 */
export const expectSocketColoursAccessible = async (page: Page, where: string, { soft = false } = {}) => {
  const feed = page.getByTestId('feed-state');
  const own = await feed.getAttribute('class');
  try {
    for (const state of SOCKET_STATES) {
      await feed.evaluate((element, name) => element.setAttribute('class', `feed feed-${name}`), state);
      const results = await axeOn(page).include('[data-testid="status-bar"]').analyze();
      const contrast = results.violations.filter((violation) => violation.id === 'color-contrast').flatMap((violation) => violation.nodes.map((node) => node.failureSummary ?? ''));
      (soft ? expect.soft : expect)(contrast, `${where}: feed-${state}`).toEqual([]);
    }
  } finally {
    await feed.evaluate((element, name) => (name === null ? element.removeAttribute('class') : element.setAttribute('class', name)), own);
  }
};
