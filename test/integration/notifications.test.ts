// Notification channels per user, end to end: a fill reaches the user's webhook (its signature
// checked here), Slack, Discord, Telegram and e-mail once each, through the outbox, the fold and
// the delivery queue; a burst within 5 s (the test's clock) is one message; a failing endpoint is
// retried, and ten failures in a row disable the channel with the reason in the list; the guard
// refuses private and foreign destinations; another user's channel is 404; no list shows a
// destination or a secret. Every endpoint is a local fake speaking the real wire format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZNotificationChannelCreated, ZNotificationChannelList, type TNotificationChannel } from '../../contracts/notifications.ts';
import { manualClock } from '../../server/clock.ts';
import { messagesOf, pruneMessages } from '../../server/notifications/queries.ts';
import { startFakeNotify, verifySignature, type FakeNotify } from '../support/fake-notify.ts';
import { startFakeSmtp, type FakeSmtp } from '../support/fake-smtp.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const clock = manualClock('2026-03-10T15:00:00.000Z');
let server: TestServer;
let fakes: FakeNotify;
let smtp: FakeSmtp;
let keyCount = 0;

beforeAll(async () => {
  fakes = await startFakeNotify();
  smtp = await startFakeSmtp();
  server = await startTestServer(
    {
      SIM_TICK_INTERVAL_MS: '0',
      NOTIFY_HOSTS: fakes.host,
      NOTIFY_TELEGRAM_API_URL: fakes.telegramApiUrl,
      // Retries at once (no backoff), more of them than the failures that disable a channel.
      NOTIFY_RETRY_LIMIT: '12',
      NOTIFY_RETRY_DELAY_SEC: '0',
      SMTP_HOST: smtp.host,
      SMTP_PORT: String(smtp.port),
      SMTP_FROM: 'notifications@trading.example',
    },
    undefined,
    { clock },
  );
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(async () => {
  await server.stop();
  await fakes.close();
  await smtp.close();
});

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `notify-test-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};

const addChannel = async (user: FactoryUser, body: Record<string, unknown>) => {
  const res = await server.http('POST', '/api/notifications/channels', { token: user.tokens.access_token, body });
  expect(res.status, res.text).toBe(201);
  return ZNotificationChannelCreated.parse(res.body);
};

const channelsOf = async (user: FactoryUser): Promise<TNotificationChannel[]> => {
  const res = await server.http('GET', '/api/notifications/channels', { token: user.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return ZNotificationChannelList.parse(res.body).items;
};

const buy = async (user: FactoryUser) => {
  const res = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market' } });
  expect(res.status, res.text).toBe(201);
  // The fill arrives as the simulator's broker event, at the clock's instant.
  await server.services.simulator.idle();
  await server.services.orders.idle();
};

/** Waits until the dispatcher has folded `count` events into the channel's gathering message. */
const gathered = (channelId: string, count: number) =>
  waitFor(
    async () => {
      await server.services.notifications.kick();
      return messagesOf(server.services.db, channelId);
    },
    (messages) => messages.some((message) => message.status === 'gathering' && message.items.length === count),
  );

/** Moves the clock past the fold window: what gathered is queued for delivery. */
const foldWindowPasses = async () => {
  clock.advance(5_000);
  await server.services.notifications.kick();
};

const settled = (channelId: string) =>
  waitFor(
    () => messagesOf(server.services.db, channelId),
    (messages) => messages.length > 0 && messages.every((message) => message.status !== 'gathering' && message.status !== 'queued'),
  );

describe('notification channels', () => {
  it('deliver a fill to the webhook (signed), Slack, Discord, Telegram and e-mail, once each', async () => {
    const user = await trader('notify_all');
    const webhook = await addChannel(user, { name: 'my server', kind: 'webhook', config: { url: fakes.webhookUrl('all') }, events: ['fill'] });
    expect(webhook.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    fakes.expectSecret('/hook/all', webhook.signing_secret!);
    const slack = await addChannel(user, { name: 'slack', kind: 'slack', config: { url: fakes.slackUrl('all-token') }, events: ['fill', 'rejection'] });
    const discord = await addChannel(user, { name: 'discord', kind: 'discord', config: { url: fakes.discordUrl('all-token') }, events: ['fill'] });
    const telegram = await addChannel(user, { name: 'telegram', kind: 'telegram', config: { bot_token: '123456:all-bot-token', chat_id: '-100200300' }, events: ['fill'] });
    const email = await addChannel(user, { name: 'mail', kind: 'email', config: { address: 'alice-notify@example.com' }, events: ['fill'] });
    expect([slack, discord, telegram, email].map((channel) => channel.signing_secret)).toEqual([null, null, null, null]);

    await buy(user);
    for (const channel of [webhook, slack, discord, telegram, email]) await gathered(channel.id, 1);
    await foldWindowPasses();
    for (const channel of [webhook, slack, discord, telegram, email]) await settled(channel.id);

    const [hook] = fakes.delivered('/hook/all');
    expect(fakes.delivered('/hook/all')).toHaveLength(1);
    const timestamp = String(hook!.headers['x-signature-timestamp']);
    expect(timestamp).toBe(String(Math.floor(clock.now().getTime() / 1000)));
    expect(verifySignature(webhook.signing_secret!, timestamp, hook!.raw, String(hook!.headers['x-signature']))).toBe(true);
    expect(hook!.signatureValid).toBe(true);
    expect(hook!.body).toMatchObject({ type: 'notification', channel: { id: webhook.id, name: 'my server' }, events: [{ event: 'fill', data: { symbol: 'BTC/USDT', side: 'buy' } }] });
    expect(hook!.body.text).toMatch(/^Fill: buy 0.001 BTC\/USDT at \d+(\.\d+)? \(crypto\), fee /);

    const slackPosts = fakes.delivered('/services/T000/B000/all-token');
    expect(slackPosts).toHaveLength(1);
    expect(slackPosts[0]!.body.text).toContain('Fill: buy 0.001 BTC/USDT');
    const discordPosts = fakes.delivered('/api/webhooks/1234/all-token');
    expect(discordPosts).toHaveLength(1);
    expect(discordPosts[0]!.body.content).toContain('Fill: buy 0.001 BTC/USDT');
    const telegramPosts = fakes.delivered('/bot123456:all-bot-token/sendMessage');
    expect(telegramPosts).toHaveLength(1);
    expect(telegramPosts[0]!.body).toMatchObject({ chat_id: '-100200300', text: expect.stringContaining('Fill: buy 0.001 BTC/USDT') });
    const mails = smtp.messages.filter((message) => message.to.includes('alice-notify@example.com'));
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ from: 'notifications@trading.example', subject: expect.stringContaining('Fill: buy 0.001 BTC/USDT') });

    const listed = await channelsOf(user);
    // Made at one instant of the test's clock: in no particular order.
    expect(listed.map((channel) => [channel.kind, channel.last_delivery_ok, channel.failure_count]).sort()).toEqual([
      ['discord', true, 0],
      ['email', true, 0],
      ['slack', true, 0],
      ['telegram', true, 0],
      ['webhook', true, 0],
    ]);
    // Nothing of a destination or a secret is listed.
    const text = JSON.stringify(listed);
    for (const secret of ['all-token', 'all-bot-token', '-100200300', 'alice-notify', webhook.signing_secret!, '/hook/all', fakes.host]) expect(text).not.toContain(secret);
  });

  it('fold a burst of fills within 5 s into one message listing them', async () => {
    const user = await trader('notify_burst');
    const channel = await addChannel(user, { name: 'burst', kind: 'webhook', config: { url: fakes.webhookUrl('burst') }, events: ['fill'] });
    fakes.expectSecret('/hook/burst', channel.signing_secret!);
    await buy(user);
    clock.advance(1_000);
    await buy(user);
    clock.advance(2_000);
    await buy(user);
    await gathered(channel.id, 3);
    // 3 s after the first fill: the window is still open.
    await server.services.notifications.kick();
    expect((await messagesOf(server.services.db, channel.id)).map((message) => message.status)).toEqual(['gathering']);
    clock.advance(2_000);
    await server.services.notifications.kick();
    await settled(channel.id);
    const posts = fakes.delivered('/hook/burst');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.body.events.map((item: { event: string }) => item.event)).toEqual(['fill', 'fill', 'fill']);
    expect(posts[0]!.body.text.split('\n')).toEqual(['3 events:', ...posts[0]!.body.events.map((item: { text: string }) => `• ${item.text}`)]);
    expect(posts[0]!.body.events[0].text).toContain('Fill: buy 0.001 BTC/USDT');
  });

  it('retry a failed delivery until it lands, the failures then cleared', async () => {
    const user = await trader('notify_retry');
    const channel = await addChannel(user, { name: 'flaky', kind: 'slack', config: { url: fakes.slackUrl('flaky') }, events: ['fill'] });
    fakes.script('/services/T000/B000/flaky', [503, 500]);
    await buy(user);
    await gathered(channel.id, 1);
    await foldWindowPasses();
    const [message] = await settled(channel.id);
    expect(message).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(fakes.requests.filter((request) => request.path === '/services/T000/B000/flaky').map((request) => request.status)).toEqual([503, 500, 200]);
    expect((await channelsOf(user))[0]).toMatchObject({ enabled: true, failure_count: 0, last_delivery_ok: true, disabled_reason: null });
  });

  it('disable a channel after 10 failed deliveries in a row, saying why in the list and the audit trail', async () => {
    const user = await trader('notify_down');
    const channel = await addChannel(user, { name: 'down', kind: 'discord', config: { url: fakes.discordUrl('down-token') }, events: ['fill'] });
    fakes.fail('/api/webhooks/1234/down-token');
    await buy(user);
    await gathered(channel.id, 1);
    await foldWindowPasses();
    const [message] = await settled(channel.id);
    expect(message).toMatchObject({ status: 'failed', attempts: 10, lastError: 'HTTP 500' });
    expect(fakes.requests.filter((request) => request.path === '/api/webhooks/1234/down-token')).toHaveLength(10);
    const [listed] = await channelsOf(user);
    expect(listed).toMatchObject({ enabled: false, failure_count: 10, last_delivery_ok: false, disabled_reason: 'Disabled after 10 failed deliveries in a row; the last: HTTP 500' });
    expect(listed!.disabled_reason).not.toContain('down-token');
    const audit = await server.http('GET', '/api/audit', { token: user.tokens.access_token });
    expect(audit.body.items.map((record: { action: string }) => record.action)).toContain('notifications.channel_disabled');

    // A disabled channel is told nothing more; enabling it again clears its failures.
    await buy(user);
    await server.services.notifications.kick();
    expect(await messagesOf(server.services.db, channel.id)).toHaveLength(1);
    const enabled = await server.http('PATCH', `/api/notifications/channels/${channel.id}`, { token: user.tokens.access_token, body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, failure_count: 0, disabled_reason: null });
  });

  it('send a test message on demand, and say when it did not land', async () => {
    const user = await newUser(server, { prefix: 'notify_test' });
    const channel = await addChannel(user, { name: 'tg', kind: 'telegram', config: { bot_token: '42:test-route-token', chat_id: '@trading_desk' }, events: ['bot_halted'] });
    const sent = await server.http('POST', `/api/notifications/channels/${channel.id}/test`, { token: user.tokens.access_token });
    expect(sent.body).toEqual({ delivered: true, error: null });
    expect(fakes.delivered('/bot42:test-route-token/sendMessage')[0]!.body).toMatchObject({ chat_id: '@trading_desk', text: expect.stringContaining('Test message') });
    fakes.script('/bot42:test-route-token/sendMessage', [401]);
    const refused = await server.http('POST', `/api/notifications/channels/${channel.id}/test`, { token: user.tokens.access_token });
    expect(refused.body).toEqual({ delivered: false, error: 'HTTP 401' });
  });

  it('refuse private, plain-http and foreign destinations with 422, without quoting the URL', async () => {
    const user = await newUser(server, { prefix: 'notify_ssrf' });
    const refusals: [Record<string, unknown>, string][] = [
      [{ kind: 'webhook', config: { url: 'https://10.1.2.3/hook/secret-path' } }, 'is not a public address'],
      [{ kind: 'webhook', config: { url: 'https://169.254.169.254/latest/meta-data' } }, 'is not a public address'],
      [{ kind: 'webhook', config: { url: 'https://[::1]:8443/hook/secret-path' } }, 'is not a public address'],
      [{ kind: 'webhook', config: { url: 'https://[::ffff:127.0.0.1]/hook/secret-path' } }, 'is not a public address'],
      // A name is judged by what it resolves to.
      [{ kind: 'webhook', config: { url: 'https://localhost:8443/hook/secret-path' } }, 'is not a public address'],
      [{ kind: 'webhook', config: { url: 'http://example.com/hook/secret-path' } }, 'must be an https URL'],
      [{ kind: 'webhook', config: { url: 'https://user:pw@example.com/hook' } }, 'must not carry a user name or password'],
      [{ kind: 'slack', config: { url: 'https://example.com/services/secret-path' } }, 'must be at hooks.slack.com'],
      [{ kind: 'discord', config: { url: 'https://discord.com.evil.example/api/webhooks/1/secret-path' } }, 'must be at discord.com or discordapp.com'],
      [{ kind: 'slack', config: { url: 'http://hooks.slack.com/services/secret-path' } }, 'must be an https URL'],
    ];
    for (const [body, reason] of refusals) {
      const res = await server.http('POST', '/api/notifications/channels', { token: user.tokens.access_token, body: { name: 'x', events: ['fill'], ...body } });
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([422, 'VALIDATION_ERROR']);
      expect(res.body.message).toContain(reason);
      expect(res.text).not.toContain('secret-path');
    }
    const wrongFields = await server.http('POST', '/api/notifications/channels', { token: user.tokens.access_token, body: { name: 'x', kind: 'telegram', events: ['fill'], config: { url: fakes.webhookUrl('x') } } });
    expect(wrongFields.status).toBe(422);
    expect(wrongFields.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(['config.bot_token', 'config.chat_id', 'config.url']);
    expect(await channelsOf(user)).toEqual([]);
  });

  it("answer 404 for another user's channel, as for a missing one, and list only the caller's", async () => {
    const owner = await newUser(server, { prefix: 'notify_owner' });
    const other = await newUser(server, { prefix: 'notify_other' });
    const channel = await addChannel(owner, { name: 'mine', kind: 'slack', config: { url: fakes.slackUrl('owner-token') }, events: ['fill'] });
    const asOther = { token: other.tokens.access_token };
    expect((await server.http('PATCH', `/api/notifications/channels/${channel.id}`, { ...asOther, body: { enabled: false } })).status).toBe(404);
    expect((await server.http('POST', `/api/notifications/channels/${channel.id}/test`, asOther)).status).toBe(404);
    expect((await server.http('DELETE', `/api/notifications/channels/${channel.id}`, asOther)).status).toBe(404);
    expect(await channelsOf(other)).toEqual([]);
    expect(fakes.requests.filter((request) => request.path.endsWith('owner-token'))).toEqual([]);
    // The owner's own calls work: change the events, then delete.
    const changed = await server.http('PATCH', `/api/notifications/channels/${channel.id}`, { token: owner.tokens.access_token, body: { events: ['fill', 'kill_switch_lock'] } });
    expect(changed.body.events).toEqual(['fill', 'kill_switch_lock']);
    expect((await server.http('DELETE', `/api/notifications/channels/${channel.id}`, { token: owner.tokens.access_token })).status).toBe(204);
    expect(await channelsOf(owner)).toEqual([]);
  });

  it('are listed with a read key and managed only with a session', async () => {
    const user = await newUser(server, { prefix: 'notify_key' });
    const key = await server.http('POST', '/api/auth/api-keys', { token: user.tokens.access_token, body: { name: 'all', scopes: ['read', 'trade', 'live', 'backtest', 'analysis'] } });
    const secret = key.body.key as string;
    expect((await server.http('GET', '/api/notifications/channels', { token: secret })).status).toBe(200);
    const create = await server.http('POST', '/api/notifications/channels', { token: secret, body: { name: 'x', kind: 'slack', config: { url: fakes.slackUrl('key') }, events: ['fill'] } });
    expect([create.status, create.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('tell a channel only of what happened after it was made, whenever the reader gets to the earlier events', async () => {
    const user = await trader('notify_late');
    await buy(user);
    clock.advance(1_000);
    const channel = await addChannel(user, { name: 'late', kind: 'slack', config: { url: fakes.slackUrl('late-token') }, events: ['fill'] });
    await buy(user);
    const [message] = await gathered(channel.id, 1);
    expect(message!.items).toEqual([expect.objectContaining({ event: 'fill', at: clock.now().toISOString() })]);
  });

  it('tell a channel of the kill switch: the −4 % alert, then the −5 % lock and the halt it brings, once each', async () => {
    const user = await trader('notify_ks');
    const channel = await addChannel(user, { name: 'risk', kind: 'slack', config: { url: fakes.slackUrl('ks-token') }, events: ['kill_switch_alert', 'kill_switch_lock', 'bot_halted'] });
    const bought = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.5, order_type: 'market' } });
    expect(bought.status, bought.text).toBe(201);
    await server.services.simulator.idle();
    await server.services.orders.idle();
    // The evaluation after the buy's fill runs off the order path: waited for, so that it reads the
    // buy's price and not the one set below (it would warn first, and the sweep then find it done).
    await server.services.killSwitch.idle();
    try {
      // 0.5 BTC bought at 50,000 of 100,000: 41,600 is −4.2 % of the day's equity, 39,000 is −5.5 %.
      await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '41600' });
      expect(await server.services.killSwitch.sweep()).toMatchObject({ warned: 1, locked: 0 });
      await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '39000' });
      expect(await server.services.killSwitch.sweep()).toMatchObject({ locked: 1 });
      expect(await server.services.killSwitch.sweep()).toMatchObject({ warned: 0, locked: 0 });
      const [message] = await gathered(channel.id, 3);
      // The lock's transaction writes the halt and the lock together, in no order that matters.
      expect(message!.items.map((item) => item.event).sort()).toEqual(['bot_halted', 'kill_switch_alert', 'kill_switch_lock']);
      await foldWindowPasses();
      await settled(channel.id);
      const sent = fakes.requests.filter((request) => request.path.endsWith('ks-token'));
      expect(sent).toHaveLength(1);
      expect(JSON.stringify(sent[0]!.body)).toMatch(/Kill switch alert: daily loss -4\.2\d* %.*locked until/s);
    } finally {
      await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
    }
  });

  it('prune the messages that finished before the retention, never one still gathering', async () => {
    const user = await trader('notify_prune');
    const channel = await addChannel(user, { name: 'pruned', kind: 'discord', config: { url: fakes.discordUrl('prune-token') }, events: ['fill'] });
    await buy(user);
    await gathered(channel.id, 1);
    await foldWindowPasses();
    await settled(channel.id);
    await buy(user);
    await gathered(channel.id, 1);
    const messages = await messagesOf(server.services.db, channel.id);
    expect(messages.map((message) => message.status).sort()).toEqual(['delivered', 'gathering']);
    const finishedAt = messages.find((message) => message.status === 'delivered')!.finishedAt!;
    // Finished after the bound: kept.
    await pruneMessages(server.services.db, new Date(finishedAt.getTime() - 1));
    expect(await messagesOf(server.services.db, channel.id)).toHaveLength(2);
    // Finished before it: gone; the gathering one stays.
    expect(await pruneMessages(server.services.db, new Date(finishedAt.getTime() + 86_400_000))).toBeGreaterThanOrEqual(1);
    expect((await messagesOf(server.services.db, channel.id)).map((message) => message.status)).toEqual(['gathering']);
  });
});
