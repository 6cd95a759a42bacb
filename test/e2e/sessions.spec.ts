// Sessions in the browser: two tabs of one user on a service whose access tokens live seconds keep
// working across several expiries (one tab refreshes at a time: a refresh token presented twice
// would end the whole session), and the settings page lists the sessions, ends the others and
// changes the password (which signs out).
import { expect, test, type Page } from '@playwright/test';
import { REFRESH_LOCK } from '../../client/console/src/refresh-lock.ts';
import { api, baseUrl, go, passwordOf, register, tokenOf, watchErrors } from './helpers.ts';
import { startE2eService, type E2eService } from './service.ts';

const ACCESS_TOKEN_SECONDS = 4;

/** The page shows a signed-in page (the nav bar, the user) and not the sign-in form. */
const signedIn = async (page: Page, username: string) => {
  await expect(page.getByTestId('username')).toHaveText(username);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toHaveCount(0);
};

/**
 * Reloads tabs while `holder` (another page of the origin) holds the tabs' refresh lock, then lets
 * it go. A tab is reloaded only between refreshes: one reloaded after the service rotated its
 * refresh token but before it stored the new one would leave the spent token behind, and its next
 * load would present it, which ends the session as a reuse must (a limit of single-use tokens held
 * by a page, in docs/clients.md). The reloaded tabs wait for the lock, then refresh one at a time.
 */
const reloadBetweenRefreshes = async (holder: Page, tabs: Page[]) => {
  await holder.evaluate(
    (lock) =>
      new Promise<void>((held) => {
        void navigator.locks.request(
          lock,
          () =>
            new Promise<void>((release) => {
              (globalThis as { releaseRefreshLock?: () => void }).releaseRefreshLock = release;
              held();
            }),
        );
      }),
    REFRESH_LOCK,
  );
  try {
    await Promise.all(tabs.map((tab) => tab.reload()));
  } finally {
    await holder.evaluate(() => (globalThis as { releaseRefreshLock?: () => void }).releaseRefreshLock?.());
  }
};

test.describe('with access tokens of a few seconds', () => {
  let service: E2eService;
  test.beforeAll(async () => {
    service = await startE2eService({ AUTH_ACCESS_TOKEN_TTL_SEC: String(ACCESS_TOKEN_SECONDS) });
  });
  test.afterAll(async () => {
    await service?.stop();
  });

  test('two tabs of one user keep working across expiries, refreshing one at a time', async ({ browser }) => {
    const { context, page: first, errors, username } = await register(browser, 'e2e_tabs', service.baseUrl);
    const second = await context.newPage();
    const secondErrors = watchErrors(second);
    await second.goto('/app/orders');
    await signedIn(second, username);
    const holder = await context.newPage();
    await holder.goto('/health');
    for (const round of [1, 2, 3]) {
      // Both tabs' access tokens run out; then both need a new one at the same moment.
      await first.waitForTimeout(ACCESS_TOKEN_SECONDS * 1000 + 500);
      if (round === 2) await reloadBetweenRefreshes(holder, [first, second]);
      else await Promise.all([go(first, round === 1 ? 'Positions' : 'Orders'), go(second, round === 1 ? 'Overview' : 'Exchange keys')]);
      await signedIn(first, username);
      await signedIn(second, username);
      // The server closed each tab's orders socket when its token expired (4001): it is back,
      // reconnected with a fresh token.
      await expect(first.getByTestId('feed-state')).toHaveText('orders socket: live');
      await expect(second.getByTestId('feed-state')).toHaveText('orders socket: live');
    }
    // The session is whole: after one more expiry a fresh load of a tab signs in again with the
    // refresh token the tabs keep (IndexedDB). The check goes through the tab rather than a
    // request of its own: a request of the test's would race the tabs' own refresh of that token
    // and present it after its rotation, which ends the session as a reuse should.
    await first.waitForTimeout(ACCESS_TOKEN_SECONDS * 1000 + 500);
    await reloadBetweenRefreshes(holder, [first]);
    await signedIn(first, username);
    await expect(first.getByTestId('feed-state')).toHaveText('orders socket: live');
    expect(errors).toEqual([]);
    expect(secondErrors).toEqual([]);
  });
});

test('settings list the sessions, end the others, and a password change signs out', async ({ browser }) => {
  const { page, errors, username } = await register(browser, 'e2e_settings');
  // A second sign-in, as a script would make one.
  const login = await api('POST', '/api/auth/login', { username, password: passwordOf(username) });
  await go(page, 'Settings');
  await expect(page.getByTestId('session-row')).toHaveCount(2);
  await expect(page.getByTestId('current-session')).toHaveCount(1);
  await page.getByTestId('end-others').click();
  await expect(page.getByTestId('done')).toContainText('1 other session(s) ended');
  await expect(page.getByTestId('session-row')).toHaveCount(1);
  const refused = await fetch(`${baseUrl()}/api/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: login.refresh_token }) });
  expect(refused.status).toBe(401);

  const newPassword = `${passwordOf(username)}-new`;
  await page.getByLabel('Current password').fill(passwordOf(username));
  await page.getByLabel('New password').fill(newPassword);
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect(await tokenOf({ username, password: newPassword })).toBeTruthy();
  expect(errors).toEqual([]);
});

test('settings create a personal API key shown once, which works until it is revoked from the page', async ({ browser }) => {
  const { page, errors } = await register(browser, 'e2e_apikey');
  await go(page, 'Settings');
  await expect(page.getByTestId('no-api-keys')).toBeVisible();
  const form = page.getByTestId('api-key-form');
  await form.getByLabel('Name').fill('my script');
  await form.getByLabel('trade').check();
  await form.getByRole('button', { name: 'Create key' }).click();
  const secret = ((await page.getByTestId('api-key-secret').locator('pre, code').first().textContent()) ?? '').trim();
  expect(secret).toMatch(/^tsk_/);
  const row = page.getByTestId('api-key-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('my script');
  await expect(row).toContainText('read, trade');
  await expect(row).not.toContainText(secret.slice(8));
  // The key reaches the API as its user.
  const me = await fetch(`${baseUrl()}/api/auth/me`, { headers: { authorization: `Bearer ${secret}` } });
  expect(me.status).toBe(200);
  await row.getByTestId('revoke-api-key').click();
  await expect(page.getByTestId('no-api-keys')).toBeVisible();
  expect((await fetch(`${baseUrl()}/api/auth/me`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
  expect(errors).toEqual([]);
});

test('settings add a notification channel, its secret shown once, test it, disable it and delete it', async ({ browser }) => {
  const { page, errors } = await register(browser, 'e2e_notify');
  await go(page, 'Settings');
  await expect(page.getByTestId('no-notifications')).toBeVisible();
  const form = page.getByTestId('notification-form');
  await form.getByLabel('Name').fill('my receiver');
  await form.getByLabel('Kind').selectOption('webhook');
  // Nothing listens on port 9: the channel is kept, and its test says it did not land.
  await form.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hook/e2e-secret-path');
  await form.getByRole('button', { name: 'Add channel' }).click();
  const secret = ((await page.getByTestId('notification-secret').locator('pre, code').first().textContent()) ?? '').trim();
  expect(secret).toMatch(/^whsec_/);
  const row = page.getByTestId('notification-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('my receiver');
  await expect(row).not.toContainText('e2e-secret-path');
  await row.getByTestId('test-notification').click();
  await expect(row.getByTestId('notification-test-result')).toContainText('Test failed: network error');
  await row.getByTestId('toggle-notification').click();
  await expect(row.getByTestId('notification-state')).toHaveText('off');
  await row.getByTestId('delete-notification').click();
  await expect(page.getByTestId('no-notifications')).toBeVisible();
  expect(errors).toEqual([]);
});
