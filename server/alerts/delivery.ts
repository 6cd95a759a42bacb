// One channel's delivery queue: bounded (the oldest waiting alert is dropped when full), a few
// deliveries at a time, each retried on the backoff schedule until it lands or gives up.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../observability/logger.ts';
import { retryDelayMs, type RetryPolicy } from './backoff.ts';
import type { AttemptResult, Channel, QueuedAlert } from './channel.ts';

export interface DeliveryOptions {
  logger: Logger;
  retry: RetryPolicy;
  /** One attempt's limit, connection and answer included. */
  attemptTimeoutMs: number;
  /** The signal that ends an attempt past its limit (a 'TimeoutError' reason). Default AbortSignal.timeout. */
  attemptDeadline?: ((ms: number) => AbortSignal) | undefined;
  /** Alerts waiting to start; beyond it the oldest is dropped. */
  capacity: number;
  /** Deliveries under way at once (each holds its place while it waits to retry). */
  concurrency: number;
  random: () => number;
}

export interface DeliveryQueue {
  push(alert: QueuedAlert): void;
  /** Resolves once nothing waits and nothing is under way. */
  idle(): Promise<void>;
  /**
   * Lets what is queued finish for up to `deadlineMs`; past it, drops what waits and cancels what
   * is under way (attempts and waits alike). Then closes the channel.
   */
  drain(deadlineMs: number): Promise<void>;
}

const about = (alert: QueuedAlert) => ({ alert: alert.kind, title: alert.title, raisedAt: alert.at });

export const createDeliveryQueue = (channel: Channel, options: DeliveryOptions): DeliveryQueue => {
  const logger = options.logger.child({ channel: channel.name, target: channel.target });
  const waiting: QueuedAlert[] = [];
  const idleWaiters: (() => void)[] = [];
  const cancel = new AbortController();
  let running = 0;
  const attemptDeadline = options.attemptDeadline ?? ((ms: number) => AbortSignal.timeout(ms));

  const attemptOnce = async (alert: QueuedAlert): Promise<AttemptResult> => {
    const signal = AbortSignal.any([cancel.signal, attemptDeadline(options.attemptTimeoutMs)]);
    try {
      return await channel.attempt(alert, signal);
    } catch (error) {
      // Channels resolve with their failures; this is a bug in one, still not the caller's problem.
      return { ok: false, permanent: true, failure: { reason: 'network', message: error instanceof Error ? error.name : 'unknown' } };
    }
  };

  const deliver = async (alert: QueuedAlert): Promise<void> => {
    const { attempts } = options.retry;
    for (let attempt = 1; ; attempt += 1) {
      const result = await attemptOnce(alert);
      if (result.ok) {
        logger.info({ ...about(alert), attempt }, 'alert delivered');
        return;
      }
      const { failure } = result;
      if (cancel.signal.aborted) {
        logger.error({ ...about(alert), attempt, failure }, 'alert delivery abandoned at shutdown');
        return;
      }
      if (result.permanent || attempt >= attempts) {
        logger.error({ ...about(alert), attempts: attempt, failure, permanent: result.permanent }, 'alert delivery gave up');
        return;
      }
      const retryInMs = retryDelayMs(attempt, options.retry, options.random());
      logger.warn({ ...about(alert), attempt, failure, retryInMs }, 'alert delivery failed; will retry');
      try {
        await sleep(retryInMs, undefined, { signal: cancel.signal });
      } catch {
        logger.error({ ...about(alert), attempt, failure }, 'alert delivery abandoned at shutdown');
        return;
      }
    }
  };

  const settleIfIdle = () => {
    if (running > 0 || waiting.length > 0) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  };

  const pump = () => {
    while (running < options.concurrency && waiting.length > 0) {
      const alert = waiting.shift()!;
      running += 1;
      void deliver(alert).finally(() => {
        running -= 1;
        pump();
        settleIfIdle();
      });
    }
  };

  const idle = () =>
    new Promise<void>((resolve) => {
      idleWaiters.push(resolve);
      settleIfIdle();
    });

  return {
    push: (alert) => {
      if (waiting.length >= options.capacity) {
        const dropped = waiting.shift()!;
        logger.error({ ...about(dropped), capacity: options.capacity }, 'alert queue full: dropped the oldest undelivered alert');
      }
      waiting.push(alert);
      pump();
    },
    idle,
    drain: async (deadlineMs) => {
      const deadline = new AbortController();
      const timedOut = await Promise.race([
        idle().then(() => false),
        sleep(deadlineMs, true, { signal: deadline.signal }).catch(() => false),
      ]);
      deadline.abort();
      if (timedOut) {
        for (const dropped of waiting.splice(0)) logger.error(about(dropped), 'alert delivery abandoned at shutdown');
        cancel.abort();
        await idle();
      }
      channel.close();
    },
  };
};
