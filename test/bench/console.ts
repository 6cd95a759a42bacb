// `node test/bench/console.ts`: the web console's weight and its overview's time to first render,
// in headless Chromium (Debian's, never a downloaded one), beside an empty page's in the same run.
//
// - Size: every file of the built console (CONSOLE_DIR, default client/console/dist), raw and gzip
//   (level 9, as a server or CDN would send it).
// - Render: a user holding 20 positions (17 crypto pairs and 3 US stocks) with 500 orders is signed
//   in (the refresh token placed where the console keeps it), and the overview is loaded
//   BENCH_CONSOLE_LOADS times, each in a fresh browser context (a cold cache, as a first visit).
//   The time is the page's own clock from navigation start to the moment every account card shows
//   its figures (equity and open orders): the data, not a spinner. The reference is the same
//   overview for an empty user (a new user with the same two paper keys, no positions, no orders),
//   loaded the same way and timed by the same rule, alternating with the loaded user's so drift on
//   the machine falls on both alike; the headline is PASS when the loaded user's p50 is within
//   twice the empty user's (the goal). A bare HTML page served on 127.0.0.1 by a node:http
//   server, timed to its `load` event, is printed too, for context only: no page that loads the
//   console's JavaScript can come near it. Every row also reports first contentful paint.
//
// The service runs on PGlite in a temp dir unless DATABASE_URL is set. Without Chromium
// (CHROMIUM_PATH or /usr/bin/chromium) the bench says so and exits 0; without a built console it
// says to run `npm run build`. The exit code is 0 whatever the figures (a report, not a test).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from '@playwright/test';
import { INSTRUMENT_UNIVERSE } from '../../server/instruments/universe.ts';
import { createCleanups, fixed, percentile, positiveInt, runBench } from './common.ts';
import { benchTrader, postJson, startBenchService } from './service.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const POSITIONS = 20;
const ORDERS = 500;
const REFRESH_KEY = 'trading-console.refresh-token';

const settings = { loads: positiveInt('BENCH_CONSOLE_LOADS', 10) };
const { cleanups, cleanUp } = createCleanups();
/** A bench user's sign-in. */
type Credentials = { username: string; password: string };
/** Within this factor of the empty user's overview, the loaded user's passes. */
const GOAL_FACTOR = 2;

/** Every file under `dir`, with its raw and gzip sizes. */
const sizesOf = (dir: string): { file: string; raw: number; gzip: number }[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => statSync(path.join(dir, file)).isFile())
    .map((file) => {
      const bytes = readFileSync(path.join(dir, file));
      return { file, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
    })
    .sort((a, b) => b.gzip - a.gzip);

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** An empty page on 127.0.0.1: the reference load. */
const startEmptyPage = async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end('<!doctype html><html><head><meta charset="utf-8"><title>empty</title></head><body><p>empty</p></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push({ what: 'empty page server', run: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
};

// Code that runs in the page is given as text: this project's TypeScript has no DOM types.
/** First contentful paint of the page, ms since navigation start (NaN if it never painted). */
const firstPaint = async (page: Page) =>
  Number(await page.evaluate(`performance.getEntriesByType('paint').find((entry) => entry.name === 'first-contentful-paint')?.startTime ?? NaN`));
/**
 * Installed before the page's own scripts: records the page's clock (in `__overviewShownAt`) the
 * first time every account card with a key shows its equity and its open orders. An observer in
 * the page, because the console's CSP forbids the string evaluation a polling probe would need.
 */
const OVERVIEW_PROBE = `(() => {
  const shown = () => {
    const cards = [...document.querySelectorAll('[data-testid^="account-"]')].filter((card) => !card.textContent.includes('No paper key'));
    return cards.length >= 2 && cards.every((card) => card.querySelector('[data-testid="equity"]') && !(card.querySelector('[data-testid="open-orders"]')?.textContent ?? '…').includes('…'));
  };
  const observer = new MutationObserver(() => {
    if (window.__overviewShownAt === undefined && shown()) {
      window.__overviewShownAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true });
})()`;

/** One cold load in a fresh context: `ready` resolves to the page's clock when what counts is on screen. */
const coldLoad = async (browser: Browser, url: string, ready: (page: Page) => Promise<number>, init?: { refreshToken: string }) => {
  const context = await browser.newContext();
  try {
    if (init) {
      await context.addInitScript({ content: `localStorage.setItem(${JSON.stringify(REFRESH_KEY)}, ${JSON.stringify(init.refreshToken)})` });
      await context.addInitScript({ content: OVERVIEW_PROBE });
    }
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    const readyMs = await ready(page);
    return { readyMs, paintMs: await firstPaint(page) };
  } finally {
    await context.close();
  }
};

type App = Awaited<ReturnType<typeof startBenchService>>['app'];

/** A user as the console's users are made, with a paper key for crypto and one for US stocks (so both account cards show figures). */
const keyedUser = async (app: App, prefix: string) => {
  const { token, username, password } = await benchTrader(app, prefix);
  const usKey = await postJson(`${app.url}/api/exchange-keys`, { exchange: 'us_broker', asset_class: 'us_equity', api_key: `${prefix}-us-${process.pid}`, api_secret: 'bench-secret' }, token);
  if (usKey.status !== 201) throw new Error(`us key registration failed: ${usKey.status} ${usKey.text}`);
  return { token, credentials: { username, password } };
};

/** A keyed user holding POSITIONS positions, with ORDERS orders in all. */
const seedTrader = async (app: App) => {
  const { token, credentials } = await keyedUser(app, 'bench_console');
  const crypto = INSTRUMENT_UNIVERSE.filter((instrument) => instrument.asset_class === 'crypto');
  const us = INSTRUMENT_UNIVERSE.filter((instrument) => instrument.asset_class === 'us_equity').slice(0, POSITIONS - crypto.length);
  const held = [...crypto, ...us];
  if (held.length !== POSITIONS) throw new Error(`the universe has ${held.length} symbols to hold, not ${POSITIONS}`);
  for (const instrument of held) {
    await app.services.simulator.setPrice({ assetClass: instrument.asset_class, symbol: instrument.symbol, price: instrument.reference_price });
  }
  let placed = 0;
  const place = async (instrument: (typeof held)[number]) => {
    const order = { asset_class: instrument.asset_class, symbol: instrument.symbol, side: 'buy', qty: instrument.lot_size === '1' ? 1 : Number(instrument.lot_size) * 10, order_type: 'market', client_order_id: `bench-console-${++placed}` };
    const answer = await postJson(`${app.url}/api/equity/orders`, order, token);
    if (answer.status !== 201) throw new Error(`order ${placed} refused: ${answer.status} ${answer.text}`);
  };
  for (const instrument of held) await place(instrument);
  // The rest, four at a time, spread over the held symbols.
  const rest = Array.from({ length: ORDERS - held.length }, (_, i) => held[i % held.length]!);
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let next = rest.shift(); next; next = rest.shift()) await place(next);
  }));
  await app.services.simulator.idle();
  await app.services.orders.idle();
  return { placed, credentials };
};

const main = async () => {
  const consoleDir = path.resolve(ROOT, process.env.CONSOLE_DIR ?? 'client/console/dist');
  if (!existsSync(path.join(consoleDir, 'index.html'))) {
    console.log(`no built console in ${consoleDir}: run \`npm run build\` first`);
    return;
  }
  const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromiumPath)) {
    console.log(`no Chromium at ${chromiumPath} (set CHROMIUM_PATH): the render figures need it`);
    return;
  }

  const sizes = sizesOf(consoleDir);
  const total = sizes.reduce((sum, file) => ({ raw: sum.raw + file.raw, gzip: sum.gzip + file.gzip }), { raw: 0, gzip: 0 });
  console.log(`console build (${path.relative(ROOT, consoleDir)}): ${sizes.length} files, ${kb(total.raw)} raw, ${kb(total.gzip)} gzip`);
  for (const file of sizes.slice(0, 6)) console.log(`  ${file.file.padEnd(40)} ${kb(file.raw).padStart(10)} ${kb(file.gzip).padStart(10)} gzip`);

  const { app } = await startBenchService({ cleanups, prefix: 'ts-bench-console-', env: { RATE_LIMIT_ORDERS_PER_MIN: '1000000', SIM_TICK_INTERVAL_MS: '0', RISK_MARKET_HOURS: 'ignore', CONSOLE_DIR: consoleDir } });
  const { placed: orders, credentials: loadedUser } = await seedTrader(app);
  const { credentials: emptyUser } = await keyedUser(app, 'bench_console_empty');
  console.log(`service up on ${app.url}; a user with ${POSITIONS} positions and ${orders} orders, and an empty one`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  cleanups.push({ what: 'browser', run: () => browser.close() });
  const emptyUrl = await startEmptyPage();

  const htmlPage: Sample[] = [];
  const emptyOverview: Sample[] = [];
  const overview: Sample[] = [];
  for (let i = 0; i < settings.loads; i++) {
    // Alternating, so drift on the machine falls on all three alike.
    htmlPage.push(await coldLoad(browser, emptyUrl, async (page) => {
      await page.waitForLoadState('load');
      return Number(await page.evaluate(`performance.getEntriesByType('navigation')[0]?.duration || performance.now()`));
    }));
    // The console signs in from a kept refresh token; each load gets a session of its own.
    emptyOverview.push(await coldLoad(browser, `${app.url}/app/`, overviewShown, { refreshToken: await freshRefreshToken(app.url, emptyUser) }));
    overview.push(await coldLoad(browser, `${app.url}/app/`, overviewShown, { refreshToken: await freshRefreshToken(app.url, loadedUser) }));
  }

  const p50 = (samples: Sample[]) => percentile(samples.map((s) => s.readyMs).sort((a, b) => a - b), 50);
  const row = (name: string, samples: Sample[]) => {
    const ready = samples.map((s) => s.readyMs).sort((a, b) => a - b);
    const paint = samples.map((s) => s.paintMs).filter(Number.isFinite).sort((a, b) => a - b);
    console.log(`${name.padEnd(60)} ${fixed(percentile(ready, 50), 0).padStart(8)} ${fixed(percentile(ready, 90), 0).padStart(8)} ${fixed(percentile(paint, 50), 0).padStart(10)}`);
  };
  console.log(`\n${settings.loads} cold loads each, ms from navigation start (page clock)`);
  console.log(`${'page'.padEnd(60)} ${'p50'.padStart(8)} ${'p90'.padStart(8)} ${'FCP p50'.padStart(10)}`);
  row('overview, empty user (figures shown)', emptyOverview);
  row(`overview, ${POSITIONS} positions + ${orders} orders (figures shown)`, overview);
  row('bare HTML page, for context (load event)', htmlPage);
  const ratio = p50(overview) / p50(emptyOverview);
  console.log(`\nloaded overview p50 / empty overview p50 = ${fixed(ratio, 2)}x: ${ratio <= GOAL_FACTOR ? 'PASS' : 'FAIL'} (goal: within ${GOAL_FACTOR}x)`);
};

type Sample = { readyMs: number; paintMs: number };

/** Waits for the overview's probe to mark every account card's figures shown; its page clock then. */
const overviewShown = async (page: Page) => {
  await page.locator('[data-testid="open-orders"]').nth(1).waitFor({ timeout: 30_000 });
  // The cards are in the DOM; the probe has marked the moment, or does within a few frames.
  for (let tries = 0; tries < 500; tries++) {
    const at = Number(await page.evaluate('window.__overviewShownAt ?? NaN'));
    if (Number.isFinite(at)) return at;
    await page.waitForTimeout(20);
  }
  throw new Error('the overview never showed every account card\'s figures');
};

/** A new session of a bench user: its refresh token, for one load. */
const freshRefreshToken = async (url: string, credentials: Credentials) => {
  const answer = await postJson(`${url}/api/auth/login`, credentials);
  const token = answer.json?.refresh_token;
  if (answer.status !== 200 || typeof token !== 'string') throw new Error(`login failed: ${answer.status} ${answer.text}`);
  return token;
};

await runBench(main, { cleanUp });
