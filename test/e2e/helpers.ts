// What the console's end-to-end specs share: the service's address, a page's error watch, a user
// registered in a fresh browser context, navigation by the nav bar, a crypto key added in the
// page, and the API called directly (for setup an operator or a test does outside the page).
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

/** A user registered through the page, in a fresh browser context (on the run's service, or the one at `url`). */
export const register = async (browser: Browser, prefix: string, url = baseUrl()) => {
  const context = await browser.newContext({ baseURL: url });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const username = `${prefix}_${Date.now().toString(36)}_${++counter}`;
  await page.goto('/app/register');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('E-mail').fill(`${username}@example.com`);
  await page.getByLabel('Password').fill(passwordOf(username));
  await page.getByRole('button', { name: 'Register' }).click();
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
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
