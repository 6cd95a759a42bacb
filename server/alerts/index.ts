// Operator alerts: every alert is logged, then delivered to the webhook and the operators' mailboxes
// in the background, with retries. Raising one never waits on the network and never throws.
import type { Clock } from '../clock.ts';
import { ConfigError, type Config } from '../config.ts';
import type { Logger } from '../observability/logger.ts';
import { checkRetryPolicy, type RetryPolicy } from './backoff.ts';
import type { Alert, Channel, QueuedAlert, Severity } from './channel.ts';
import { createDeliveryQueue, type DeliveryQueue } from './delivery.ts';
import { createEmailChannel, type SmtpSettings } from './email.ts';
import { createWebhookChannel } from './webhook.ts';

export type { Alert, Severity } from './channel.ts';
export type { RetryPolicy } from './backoff.ts';
export type { SmtpSettings } from './email.ts';

export interface RetryOptions extends RetryPolicy {
  /** One attempt's limit: a receiver that never answers costs at most this per attempt. */
  timeoutMs: number;
}

export interface AlertsOptions {
  logger: Logger;
  clock: Clock;
  /** Empty: no webhook. */
  webhookUrl: string;
  /** Empty: no e-mail. */
  operatorEmails: readonly string[];
  /** Undefined or an empty host: no e-mail. */
  smtp: SmtpSettings | undefined;
  retry?: Partial<RetryOptions>;
  /** Alerts waiting per channel before the oldest is dropped. */
  queueCapacity?: number;
  /** Deliveries under way at once per channel. */
  concurrency?: number;
  /** How long close() lets queued deliveries finish. */
  closeTimeoutMs?: number;
  /** Jitter source, in [0, 1). */
  random?: () => number;
  /**
   * The signal that ends a delivery attempt after retry.timeoutMs, aborting with a 'TimeoutError':
   * AbortSignal.timeout by default; a test passes one it aborts itself.
   */
  attemptDeadline?: (ms: number) => AbortSignal;
}

export interface Alerts {
  /** Something an operator must act on: logged at error, then delivered. Returns at once. */
  critical(alert: Alert): void;
  /** Something an operator should know (a live promotion): logged at info, then delivered. Returns at once. */
  info(alert: Alert): void;
  /** Resolves when every queued delivery has landed or given up: for tests and shutdown. */
  idle(): Promise<void>;
  /** Stops accepting deliveries (alerts are still logged), lets the queued ones finish up to the deadline. */
  close(): Promise<void>;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 5, baseMs: 1_000, maxMs: 30_000, timeoutMs: 10_000 };

/** The alerts' part of the service settings, as createAlerts takes it. */
export const alertChannelsFromConfig = (
  config: Pick<Config, 'ALERT_WEBHOOK_URL' | 'OPERATOR_EMAILS' | 'SMTP_HOST' | 'SMTP_PORT' | 'SMTP_USER' | 'SMTP_PASSWORD' | 'SMTP_FROM'>,
): Pick<AlertsOptions, 'webhookUrl' | 'operatorEmails' | 'smtp'> => ({
  webhookUrl: config.ALERT_WEBHOOK_URL,
  operatorEmails: config.OPERATOR_EMAILS,
  smtp: config.SMTP_HOST
    ? { host: config.SMTP_HOST, port: config.SMTP_PORT, user: config.SMTP_USER, password: config.SMTP_PASSWORD, from: config.SMTP_FROM }
    : undefined,
});

/** A misconfigured channel fails start-up: an operator must not believe alerts reach them when none can. */
const webhookChannel = (webhookUrl: string): Channel | undefined => {
  if (!webhookUrl) return undefined;
  let url: URL;
  try {
    url = new URL(webhookUrl);
  } catch {
    throw new ConfigError('ALERT_WEBHOOK_URL', 'is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError('ALERT_WEBHOOK_URL', 'must be an http(s) URL');
  return createWebhookChannel(url);
};

const emailChannel = (options: AlertsOptions, attemptTimeoutMs: number, logger: Logger): Channel | undefined => {
  const { smtp, operatorEmails } = options;
  if (!smtp?.host) {
    if (operatorEmails.length > 0) logger.warn('OPERATOR_EMAILS is set but SMTP_HOST is not: alerts are not e-mailed');
    return undefined;
  }
  if (operatorEmails.length === 0) {
    logger.warn('SMTP_HOST is set but OPERATOR_EMAILS is empty: alerts are not e-mailed');
    return undefined;
  }
  if (!smtp.from && !smtp.user) throw new ConfigError('SMTP_FROM', 'is required when SMTP_HOST is set and SMTP_USER is not');
  return createEmailChannel({ smtp, to: operatorEmails, attemptTimeoutMs });
};

/** A copy that no later change of the caller's object reaches, and that JSON can always carry. */
const detachedData = (data: Record<string, unknown> | undefined): Record<string, unknown> => {
  if (!data) return {};
  try {
    return JSON.parse(JSON.stringify(data, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))) as Record<
      string,
      unknown
    >;
  } catch {
    return { unserializable: true };
  }
};

export const createAlerts = (options: AlertsOptions): Alerts => {
  const logger = options.logger.child({ area: 'alerts' });
  const { timeoutMs: attemptTimeoutMs, ...retry } = { ...DEFAULT_RETRY, ...options.retry };
  checkRetryPolicy(retry);
  const channels = [webhookChannel(options.webhookUrl), emailChannel(options, attemptTimeoutMs, logger)].filter(
    (channel): channel is Channel => channel !== undefined,
  );
  const queues: DeliveryQueue[] = channels.map((channel) =>
    createDeliveryQueue(channel, {
      logger,
      retry,
      attemptTimeoutMs,
      capacity: options.queueCapacity ?? 100,
      concurrency: options.concurrency ?? 2,
      random: options.random ?? Math.random,
      attemptDeadline: options.attemptDeadline,
    }),
  );
  let closing: Promise<void> | undefined;
  logger.info({ channels: ['log', ...channels.map((channel) => `${channel.name} ${channel.target}`)] }, 'alerts ready');

  const raise = (severity: Severity, alert: Alert) => {
    try {
      const queued: QueuedAlert = {
        severity,
        kind: alert.kind,
        title: alert.title,
        text: alert.text,
        data: detachedData(alert.data),
        at: options.clock.now().toISOString(),
      };
      // The log is the channel that always works: it comes first, whatever happens to the others.
      const line = { alert: queued.kind, severity, title: queued.title, text: queued.text, data: queued.data, at: queued.at };
      if (severity === 'critical') logger.error(line, `critical alert: ${queued.title}`);
      else logger.info(line, `alert: ${queued.title}`);
      if (closing) {
        if (queues.length > 0) logger.warn({ alert: queued.kind }, 'alerts are closed: this alert is only logged');
        return;
      }
      for (const queue of queues) queue.push(queued);
    } catch (error) {
      // Raising an alert is called from order paths: nothing here may fail one.
      logger.error({ err: error, alert: alert?.kind }, 'alert could not be queued');
    }
  };

  return {
    critical: (alert) => raise('critical', alert),
    info: (alert) => raise('info', alert),
    idle: async () => {
      await Promise.all(queues.map((queue) => queue.idle()));
    },
    close: () => {
      closing ??= Promise.all(queues.map((queue) => queue.drain(options.closeTimeoutMs ?? 10_000))).then(() => undefined);
      return closing;
    },
  };
};
