// Operator alerts against a local webhook receiver and a local SMTP sink: delivered once after
// retries, given up on in bounded time, never blocking the caller, never logging a secret.
import { afterEach, describe, expect, it } from 'vitest';
import { createAlerts, type Alerts, type AlertsOptions } from '../../server/alerts/index.ts';
import { manualClock } from '../../server/clock.ts';
import { ConfigError } from '../../server/config.ts';
import { startFakeSmtp } from '../support/fake-smtp.ts';
import { startFakeWebhook } from '../support/fake-webhook.ts';
import { capturedLogger } from '../support/logs.ts';
import { SAFETY_NET_MS, waitFor } from '../support/wait.ts';

const RAISED_AT = '2026-03-09T13:30:00.000Z';
/**
 * Retries in milliseconds, so a test awaits idle() instead of a real schedule; an attempt's limit
 * no answered request comes near on a loaded machine (a receiver that never answers has its
 * attempts ended by the test: heldAttempts).
 */
const TINY_RETRY = { attempts: 3, baseMs: 1, maxMs: 2, timeoutMs: SAFETY_NET_MS };
const PATH_TOKEN = 'T0KEN-in-the-path-5ecret';
const QUERY_TOKEN = 'query-5ecret-value';
const SMTP_PASSWORD = 'smtp-Pa55word-never-logged';

const firstLiveOrder = {
  kind: 'first_live_order',
  title: 'First live order: user 7, us_equity',
  text: 'User 7 placed their first live us_equity order.',
  data: { userId: 7, assetClass: 'us_equity', brokerOrderId: 'b-123' },
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const setUp = (options: Partial<AlertsOptions> = {}) => {
  const logs = capturedLogger('info');
  const alerts: Alerts = createAlerts({
    logger: logs.logger,
    clock: manualClock(RAISED_AT),
    webhookUrl: '',
    operatorEmails: [],
    smtp: undefined,
    retry: TINY_RETRY,
    ...options,
  });
  cleanups.push(() => alerts.close());
  const linesWith = (msg: string) => logs.lines.filter((line) => line.msg === msg);
  return { alerts, logs, linesWith };
};

/**
 * Attempt deadlines the test ends itself, for a receiver that never answers: an attempt times out
 * once the receiver holds its request, never before it arrives however slow the machine.
 */
const heldAttempts = () => {
  const open: AbortController[] = [];
  return {
    attemptDeadline: () => {
      const deadline = new AbortController();
      open.push(deadline);
      return deadline.signal;
    },
    /** The receiver's answer: it holds the request, and the oldest attempt under way times out. */
    holdAndExpire: () => {
      open.shift()?.abort(new DOMException('the attempt timed out', 'TimeoutError'));
      return 'never' as const;
    },
  };
};

const webhook = async (...args: Parameters<typeof startFakeWebhook>) => {
  const receiver = await startFakeWebhook(...args);
  cleanups.push(() => receiver.close());
  return receiver;
};

const smtpSink = async (...args: Parameters<typeof startFakeSmtp>) => {
  const sink = await startFakeSmtp(...args);
  cleanups.push(() => sink.close());
  return sink;
};

describe('alerts: webhook', () => {
  it('delivers once after the receiver fails twice, with a chat-readable text', async () => {
    const receiver = await webhook({ answer: (nth) => (nth <= 2 ? 500 : 200) });
    const { alerts, logs, linesWith } = setUp({ webhookUrl: receiver.url(`/hooks/${PATH_TOKEN}?sig=${QUERY_TOKEN}`) });

    alerts.critical(firstLiveOrder);
    await alerts.idle();

    expect(receiver.requests).toHaveLength(3);
    expect(receiver.accepted).toHaveLength(1);
    expect(receiver.accepted[0]).toEqual({
      text: '[CRITICAL] First live order: user 7, us_equity (first_live_order)\nUser 7 placed their first live us_equity order.',
      severity: 'critical',
      kind: 'first_live_order',
      title: firstLiveOrder.title,
      data: firstLiveOrder.data,
      at: RAISED_AT,
    });
    expect(linesWith('critical alert: First live order: user 7, us_equity')).toEqual([
      expect.objectContaining({ level: 'error', alert: 'first_live_order', at: RAISED_AT, data: firstLiveOrder.data }),
    ]);
    const retries = linesWith('alert delivery failed; will retry');
    expect(retries.map((line) => [line.level, line.attempt, (line.failure as { status: number }).status])).toEqual([
      ['warn', 1, 500],
      ['warn', 2, 500],
    ]);
    expect(linesWith('alert delivered')).toEqual([expect.objectContaining({ attempt: 3, channel: 'webhook', target: receiver.url('') })]);
    expect(logs.text()).not.toContain(PATH_TOKEN);
    expect(logs.text()).not.toContain(QUERY_TOKEN);
  });

  it('returns at once from critical() when the receiver never answers, and gives up after the attempts', async () => {
    const held = heldAttempts();
    const receiver = await webhook({ answer: held.holdAndExpire });
    const { alerts, logs, linesWith } = setUp({ webhookUrl: receiver.url(`/hooks/${PATH_TOKEN}`), attemptDeadline: held.attemptDeadline });

    const returned: unknown = alerts.critical(firstLiveOrder);

    // Nothing has been delivered or given up yet: the call did not wait on the network.
    expect(returned).toBeUndefined();
    expect(linesWith('critical alert: First live order: user 7, us_equity')).toHaveLength(1);
    expect(linesWith('alert delivery gave up')).toHaveLength(0);

    await alerts.idle();
    expect(receiver.requests).toHaveLength(3);
    expect(linesWith('alert delivery failed; will retry')).toHaveLength(2);
    expect(linesWith('alert delivery gave up')).toEqual([
      expect.objectContaining({ level: 'error', attempts: 3, failure: { reason: 'timeout' }, alert: 'first_live_order' }),
    ]);
    expect(logs.text()).not.toContain(PATH_TOKEN);
  });

  it('gives up at once on a refusal that retrying would not change (404)', async () => {
    const receiver = await webhook({ answer: () => 404 });
    const { alerts, linesWith } = setUp({ webhookUrl: receiver.url() });

    alerts.critical(firstLiveOrder);
    await alerts.idle();

    expect(receiver.requests).toHaveLength(1);
    expect(linesWith('alert delivery gave up')).toEqual([
      expect.objectContaining({ attempts: 1, permanent: true, failure: { reason: 'http_status', status: 404 } }),
    ]);
  });

  it('logs a refused connection without the URL secrets, and gives up after the attempts', async () => {
    const receiver = await webhook();
    const url = receiver.url(`/hooks/${PATH_TOKEN}`);
    await receiver.close();
    const { alerts, logs, linesWith } = setUp({ webhookUrl: url });

    alerts.critical(firstLiveOrder);
    await alerts.idle();

    expect(linesWith('alert delivery gave up')).toEqual([
      expect.objectContaining({ attempts: 3, failure: expect.objectContaining({ reason: 'network', code: 'ECONNREFUSED' }) }),
    ]);
    expect(logs.text()).not.toContain(PATH_TOKEN);
  });

  it('keeps the queue bounded: when full, the oldest waiting alert is dropped with an error log', async () => {
    const held = heldAttempts();
    const receiver = await webhook({ answer: held.holdAndExpire });
    const { alerts, linesWith } = setUp({
      webhookUrl: receiver.url(),
      retry: { attempts: 1, baseMs: 1, maxMs: 1 },
      attemptDeadline: held.attemptDeadline,
      queueCapacity: 2,
      concurrency: 1,
    });

    // The first starts at once; the second and third wait; the fourth pushes the second out.
    for (const n of [1, 2, 3, 4]) alerts.critical({ ...firstLiveOrder, title: `alert ${n}` });
    await alerts.idle();

    expect(receiver.requests.map((request) => request.body.title)).toEqual(['alert 1', 'alert 3', 'alert 4']);
    expect(linesWith('alert queue full: dropped the oldest undelivered alert')).toEqual([
      expect.objectContaining({ level: 'error', title: 'alert 2', capacity: 2 }),
    ]);
  });

  it('carries data JSON cannot, without throwing at the caller', async () => {
    const receiver = await webhook();
    const { alerts } = setUp({ webhookUrl: receiver.url() });
    const circular: Record<string, unknown> = {};
    circular.self = circular;

    expect(() => alerts.critical({ ...firstLiveOrder, data: { quantity: 10n } })).not.toThrow();
    expect(() => alerts.critical({ ...firstLiveOrder, data: circular })).not.toThrow();
    await alerts.idle();

    expect(receiver.accepted.map((body) => body.data)).toEqual([{ quantity: '10' }, { unserializable: true }]);
  });

  it('refuses a webhook URL that is not one, without echoing it', () => {
    const attempt = () => setUp({ webhookUrl: `not a url ${PATH_TOKEN}` });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^ALERT_WEBHOOK_URL: is not a valid URL$/);
    expect(() => setUp({ webhookUrl: 'ftp://example.com/hook' })).toThrow(ConfigError);
  });
});

describe('alerts: e-mail', () => {
  it('mails every operator with the title as subject, logging in without logging the password', async () => {
    const sink = await smtpSink({ auth: { user: 'alerts', password: SMTP_PASSWORD } });
    const receiver = await webhook();
    const { alerts, logs } = setUp({
      webhookUrl: receiver.url(),
      operatorEmails: ['ops@example.com', 'oncall@example.com'],
      smtp: { host: sink.host, port: sink.port, user: 'alerts', password: SMTP_PASSWORD, from: 'alerts@example.com' },
    });

    alerts.critical(firstLiveOrder);
    await alerts.idle();

    expect(sink.messages).toHaveLength(1);
    const [mail] = sink.messages;
    expect(mail).toMatchObject({ from: 'alerts@example.com', to: ['ops@example.com', 'oncall@example.com'], subject: firstLiveOrder.title });
    expect(mail!.text).toContain(firstLiveOrder.text);
    expect(mail!.text).toContain(`at: ${RAISED_AT}`);
    expect(receiver.accepted).toHaveLength(1);
    expect(logs.text()).not.toContain(SMTP_PASSWORD);
  });

  it('gives up at once when the server refuses the login, and the password reaches no log line', async () => {
    const sink = await smtpSink({ auth: { user: 'alerts', password: 'the-right-one' } });
    const { alerts, logs, linesWith } = setUp({
      operatorEmails: ['ops@example.com'],
      smtp: { host: sink.host, port: sink.port, user: 'alerts', password: SMTP_PASSWORD, from: '' },
    });

    alerts.critical(firstLiveOrder);
    await alerts.idle();

    expect(sink.refusedLogins()).toBe(1);
    expect(sink.messages).toHaveLength(0);
    expect(linesWith('alert delivery gave up')).toEqual([
      expect.objectContaining({ attempts: 1, permanent: true, failure: expect.objectContaining({ reason: 'smtp', code: 'EAUTH', responseCode: 535 }) }),
    ]);
    expect(logs.text()).not.toContain(SMTP_PASSWORD);
    expect(logs.text()).not.toContain(Buffer.from(SMTP_PASSWORD).toString('base64'));
  });

  it('sends info alerts the same way, logged at info', async () => {
    const sink = await smtpSink();
    const { alerts, linesWith } = setUp({
      operatorEmails: ['ops@example.com'],
      smtp: { host: sink.host, port: sink.port, user: '', password: '', from: 'alerts@example.com' },
    });

    alerts.info({ kind: 'live_promotion', title: 'User 7 promoted to live', text: 'Approved by admin 1.' });
    await alerts.idle();

    expect(sink.messages.map((mail) => mail.subject)).toEqual(['User 7 promoted to live']);
    expect(linesWith('alert: User 7 promoted to live')).toEqual([expect.objectContaining({ level: 'info', severity: 'info' })]);
  });
});

describe('alerts: nothing configured, and closing', () => {
  it('only logs when no channel is configured', async () => {
    const { alerts, logs } = setUp();

    alerts.critical(firstLiveOrder);
    await alerts.idle();
    await alerts.close();

    expect(logs.lines.map((line) => [line.level, line.msg])).toEqual([
      ['info', 'alerts ready'],
      ['error', 'critical alert: First live order: user 7, us_equity'],
    ]);
    expect(logs.lines[0]).toMatchObject({ channels: ['log'] });
  });

  it('close() waits no longer than its deadline, then abandons what is under way and only logs later alerts', async () => {
    const receiver = await webhook({ answer: () => 'never' });
    const { alerts, linesWith } = setUp({
      webhookUrl: receiver.url(),
      retry: { attempts: 5, baseMs: 1, maxMs: 2, timeoutMs: 60_000 },
      closeTimeoutMs: 50,
    });

    alerts.critical(firstLiveOrder);
    // Close while the attempt is under way (the receiver holds it), not before it starts.
    await waitFor(() => Promise.resolve(receiver.requests.length), (count) => count === 1);
    await alerts.close();
    alerts.critical({ ...firstLiveOrder, title: 'after close' });
    await alerts.idle();

    expect(linesWith('alert delivery abandoned at shutdown')).toEqual([expect.objectContaining({ level: 'error', attempt: 1 })]);
    expect(linesWith('critical alert: after close')).toHaveLength(1);
    expect(linesWith('alerts are closed: this alert is only logged')).toHaveLength(1);
    expect(receiver.requests.map((request) => request.body.title)).toEqual([firstLiveOrder.title]);
  });
});
