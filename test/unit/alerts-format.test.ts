// What alert deliveries put on the wire and in the logs: chat-safe text, and no webhook token.
import { describe, expect, it } from 'vitest';
import type { QueuedAlert } from '../../server/alerts/channel.ts';
import { emailBody } from '../../server/alerts/email.ts';
import { secretScrubber, webhookSecrets, webhookTarget } from '../../server/alerts/redaction.ts';
import { webhookPayload } from '../../server/alerts/webhook.ts';

const alert: QueuedAlert = {
  severity: 'critical',
  kind: 'first_live_order',
  title: 'First live order: <!channel> & co',
  text: 'user 7 placed a live us_equity order',
  data: { userId: 7 },
  at: '2026-03-09T13:30:00.000Z',
};

describe('webhookPayload', () => {
  it('carries a Slack-readable text, escaping the characters Slack treats as markup', () => {
    const payload = webhookPayload(alert);
    expect(payload.text).toBe('[CRITICAL] First live order: &lt;!channel&gt; &amp; co (first_live_order)\nuser 7 placed a live us_equity order');
    expect(payload).toMatchObject({ kind: 'first_live_order', title: alert.title, data: { userId: 7 }, at: alert.at, severity: 'critical' });
  });
});

describe('emailBody', () => {
  it('has the text, the kind and instant, and the data', () => {
    const body = emailBody(alert);
    expect(body).toContain('user 7 placed a live us_equity order');
    expect(body).toContain('critical: first_live_order');
    expect(body).toContain('at: 2026-03-09T13:30:00.000Z');
    expect(body).toContain('"userId": 7');
  });
});

describe('webhook redaction', () => {
  const url = new URL('https://bot:p%40ss-word@hooks.example.com/services/T0001/B0002/XyZsecretToken123?token=query-secret-1&v=1');

  it('names a webhook by its origin only', () => {
    expect(webhookTarget(url)).toBe('https://hooks.example.com');
  });

  it('cuts the path, query, user info and their pieces out of a message', () => {
    const scrub = secretScrubber(webhookSecrets(url));
    const message = `failed ${url.href}; token XyZsecretToken123, query query-secret-1, pass p@ss-word, path /services/T0001/B0002/XyZsecretToken123`;
    const scrubbed = scrub(message);
    for (const secret of ['XyZsecretToken123', 'query-secret-1', 'p@ss-word', 'p%40ss-word', '/services/T0001']) expect(scrubbed).not.toContain(secret);
    expect(scrubbed).toContain('failed [redacted]');
  });

  it('leaves short, secret-free pieces of a message alone', () => {
    expect(secretScrubber(webhookSecrets(url))('connect ECONNREFUSED 127.0.0.1:443 v=1')).toBe('connect ECONNREFUSED 127.0.0.1:443 v=1');
  });
});
