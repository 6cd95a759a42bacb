// The console's accessibility check: axe-core, through @axe-core/playwright, with no
// serious or critical WCAG 2.0/2.1 A and AA violation allowed (blockingViolations and
// expectAccessible in helpers.ts).
//
// Most pages are checked where their screenshots are taken (screenshots.spec.ts): each page the
// screenshot spec loads, once settled, is scanned on the same load, light and dark at 1400×900,
// and the trader's first pages at a phone's 390×844; the status bar's socket colours, light and
// dark, on its Overview. Loading every page a second time here, in the same states, only for the
// scan, doubled the browser's work. What this file keeps is what the screenshots do not show: the
// check itself (a page with known faults must fail it), a new user's empty Overview, and the
// theme switches (the screenshots read the theme from the stored choice).
import { expect, test, type Page } from '@playwright/test';
import { baseUrl, blockingViolations, expectAccessible, register } from './helpers.ts';

/** The header's (or the sign-in page's) switch to the dark theme, and the page in it. */
const switchToDark = async (page: Page) => {
  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
};

// The check itself: a page with a known fault must fail it, or the passes elsewhere would prove nothing.
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
  // The sign-in page's own switch to the dark theme.
  await switchToDark(page);
});

// A new user's overview: its fills table empty, a row saying so under the headers; light, then
// dark through the header's switch.
test('an empty Overview, light and dark, has no serious or critical axe violation', async ({ browser }) => {
  const { context, page } = await register(browser, 'e2e_axe_new');
  await expect(page.getByTestId('no-fills')).toBeVisible();
  await expectAccessible(page, 'empty Overview');
  await switchToDark(page);
  await expect(page.getByTestId('no-fills')).toBeVisible();
  await expectAccessible(page, 'empty Overview (dark)');
  await context.close();
});
