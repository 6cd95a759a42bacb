// The webhook channel: one JSON POST per alert, its `text` readable by Slack incoming webhooks and
// Discord's Slack-compatible endpoint (…/slack); the other fields are for machines.
import { abortFailure, type AttemptResult, type Channel, type QueuedAlert } from './channel.ts';
import { secretScrubber, webhookSecrets, webhookTarget } from './redaction.ts';

/** Slack reads &, < and > as control characters: `<!channel>` in an alert would page everyone. */
const escapeSlack = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export const webhookText = (alert: QueuedAlert): string =>
  `[${alert.severity.toUpperCase()}] ${escapeSlack(alert.title)} (${escapeSlack(alert.kind)})\n${escapeSlack(alert.text)}`;

export const webhookPayload = (alert: QueuedAlert) => ({
  text: webhookText(alert),
  severity: alert.severity,
  kind: alert.kind,
  title: alert.title,
  data: alert.data,
  at: alert.at,
});

/** A status worth another attempt: the receiver's trouble or its rate limit, not our request's. */
const retryableStatus = (status: number): boolean => status >= 500 || status === 408 || status === 429;

export const createWebhookChannel = (url: URL): Channel => {
  const scrub = secretScrubber(webhookSecrets(url));
  return {
    name: 'webhook',
    target: webhookTarget(url),
    attempt: async (alert, signal): Promise<AttemptResult> => {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(webhookPayload(alert)),
          // A webhook that redirects is misconfigured; following it could hand the payload elsewhere.
          redirect: 'manual',
          signal,
        });
        // The answer's content is never used; cancelling frees the connection.
        await response.body?.cancel().catch(() => undefined);
        if (response.ok) return { ok: true };
        return { ok: false, permanent: !retryableStatus(response.status), failure: { reason: 'http_status', status: response.status } };
      } catch (error) {
        const aborted = abortFailure(signal);
        if (aborted) return aborted;
        // fetch's own message is a bare 'fetch failed'; the socket's reason is in the cause.
        const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
        const code = (cause as { code?: unknown } | null)?.code;
        return {
          ok: false,
          permanent: false,
          failure: { reason: 'network', ...(typeof code === 'string' ? { code } : {}), message: scrub(cause instanceof Error ? cause.message : String(cause)) },
        };
      }
    },
    close: () => undefined,
  };
};
