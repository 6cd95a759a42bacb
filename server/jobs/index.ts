// Background work on pg-boss, in the same database: scheduled and queued jobs, each run by one
// worker of whichever instance claims it. Runs inside the API process (WORKERS_IN_PROCESS=true,
// the default) or alone (`npm run worker`). Later areas add their queues here.
import type { PgBoss } from 'pg-boss';
import { ANALYSIS_QUEUE } from '../analysis/analysis.ts';
import type { Services } from '../services.ts';
import { pruneEvents } from '../events/queries.ts';
import { pruneMessages } from '../notifications/queries.ts';
import { sweepExpiredAuthRows } from './auth-sweep.ts';
import { LIQUIDATE_QUEUE } from '../live/kill-switch.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { foldTallies } from '../db/tallies.ts';
import { orderTally } from '../orders/orders.ts';
import { auditTally } from '../audit/queries.ts';
import { DELIVER_QUEUE } from '../notifications/dispatcher.ts';

export const AUTH_SWEEP = 'auth-sweep';
export const EXPIRE_DAY_ORDERS = 'sim-expire-day-orders';
export const RECONCILE_ORDERS = 'orders-reconcile';
export const PRUNE_EVENTS = 'events-prune';
export const KILL_SWITCH_SWEEP = 'kill-switch-sweep';
export const FOLD_COUNTS = 'counts-fold';
export const SIGNALS_SWEEP = 'signals-sweep';
/** Hourly, at a minute off the hour so it does not meet every other hourly job. */
const AUTH_SWEEP_CRON = '17 * * * *';
const PRUNE_EVENTS_CRON = '41 * * * *';

export interface Workers {
  readonly boss: PgBoss;
  stop(): Promise<void>;
}

export const startWorkers = async (services: Services): Promise<Workers> => {
  const { db, config, logger, clock, simulator, orders, jobs, analysis, killSwitch, botRunner, notifications, signals } = services;
  const boss = await jobs.boss();
  try {
    await boss.createQueue(AUTH_SWEEP);
    await boss.schedule(AUTH_SWEEP, AUTH_SWEEP_CRON);
    await boss.work(AUTH_SWEEP, async () => {
      const removed = await sweepExpiredAuthRows({ db, loginWindowMin: config.LOGIN_WINDOW_MIN, now: clock.now() });
      logger.info({ job: AUTH_SWEEP, ...removed }, 'job done');
    });
    // One sweep when workers start, then the schedule: a singleton, so N starting instances queue one.
    await boss.send(AUTH_SWEEP, {}, { singletonKey: 'startup', singletonSeconds: 60 });
    // Day orders end at their session's close: checked every minute by whichever worker claims it.
    await boss.createQueue(EXPIRE_DAY_ORDERS);
    await boss.schedule(EXPIRE_DAY_ORDERS, '* * * * *');
    await boss.work(EXPIRE_DAY_ORDERS, async () => {
      // The simulator's, and the order emulator's (a real broker ends its own).
      const expired = (await simulator.expireDayOrders()) + (await orders.expireEmulated());
      if (expired > 0) logger.info({ job: EXPIRE_DAY_ORDERS, expired }, 'job done');
    });
    // Orders a crash left behind the broker: at start-up (app.ts) and every minute after, so an
    // intent too young to settle at start-up is settled once it is old enough.
    await boss.createQueue(RECONCILE_ORDERS);
    await boss.schedule(RECONCILE_ORDERS, '* * * * *');
    await boss.work(RECONCILE_ORDERS, async () => {
      const { linked, settled, ambiguous, rearmed } = await orders.reconcile();
      if (linked + settled + ambiguous + rearmed > 0) logger.info({ job: RECONCILE_ORDERS, linked, settled, ambiguous, rearmed }, 'job done');
    });
    // Events older than EVENTS_RETENTION_HOURS leave the outbox (a client resuming from further
    // back backfills through the REST routes instead), and finished notification messages older
    // than NOTIFY_MESSAGES_RETENTION_DAYS their table.
    await boss.createQueue(PRUNE_EVENTS);
    await boss.schedule(PRUNE_EVENTS, PRUNE_EVENTS_CRON);
    await boss.work(PRUNE_EVENTS, async () => {
      const removed = await pruneEvents(db, new Date(clock.now().getTime() - config.EVENTS_RETENTION_HOURS * 3_600_000));
      const messages = await pruneMessages(db, new Date(clock.now().getTime() - config.NOTIFY_MESSAGES_RETENTION_DAYS * 86_400_000));
      if (removed + messages > 0) logger.info({ job: PRUNE_EVENTS, removed, messages }, 'job done');
    });
    // The kill switch's sweep of every account, once a minute by whichever worker claims it
    // (after-fill evaluations catch most breaches sooner; a price that falls without a fill waits
    // for this). Its actions are idempotent in the database, so an overlap with another does no harm.
    await boss.createQueue(KILL_SWITCH_SWEEP);
    await boss.schedule(KILL_SWITCH_SWEEP, '* * * * *');
    await boss.work(KILL_SWITCH_SWEEP, async () => {
      const result = await killSwitch.sweep();
      if (result.warned + result.locked > 0) logger.warn({ job: KILL_SWITCH_SWEEP, ...result }, 'job done');
    });
    // The kept counts' changes folded into their summaries, so that a total reads a minute of
    // changes at most; any instance may claim it (the fold takes turns under its own lock).
    await boss.createQueue(FOLD_COUNTS);
    await boss.schedule(FOLD_COUNTS, '* * * * *');
    await boss.work(FOLD_COUNTS, async () => {
      const folded = await foldTallies(db, [orderTally, auditTally]);
      if (folded > 0) logger.debug({ job: FOLD_COUNTS, folded }, 'job done');
    });
    // Signals a crash or a lost database left pending (server/signals/signals.ts places them in
    // process as they come): each minute, and once when workers start.
    await boss.createQueue(SIGNALS_SWEEP);
    await boss.schedule(SIGNALS_SWEEP, '* * * * *');
    await boss.work(SIGNALS_SWEEP, async () => {
      const { placed, late } = await signals.sweep();
      if (placed + late > 0) logger.info({ job: SIGNALS_SWEEP, placed, late }, 'job done');
    });
    await boss.send(SIGNALS_SWEEP, {}, { singletonKey: 'startup', singletonSeconds: 60 });
    // Liquidations that waited for a closed market's open.
    await boss.createQueue(LIQUIDATE_QUEUE);
    await boss.work<{ userId: number; assetClass: TAssetClass }>(LIQUIDATE_QUEUE, async ([job]) => {
      if (job) await killSwitch.liquidate(job.data);
    });
    // Queued analyses, highest priority first, ANALYSIS_WORKERS at a time in this instance.
    await analysis.startWorkers(boss);
    // Users' notifications: the outbox read once per cluster (under its cursor's lock), and their deliveries.
    await notifications.startWorkers(boss);
    // The price walk and the matching of resting orders: one instance at a time, under a lease.
    simulator.start();
    // The users' bots: each in one instance at a time, under its own lease.
    botRunner.start();
  } catch (error) {
    await notifications.stopWorkers();
    await jobs.stop(0);
    throw error;
  }
  logger.info({ jobs: [AUTH_SWEEP, EXPIRE_DAY_ORDERS, RECONCILE_ORDERS, PRUNE_EVENTS, KILL_SWITCH_SWEEP, FOLD_COUNTS, SIGNALS_SWEEP, LIQUIDATE_QUEUE, ANALYSIS_QUEUE, DELIVER_QUEUE, 'simulator', 'bots'] }, 'workers started');
  return {
    boss,
    stop: async () => {
      await botRunner.stop();
      await simulator.stop();
      await notifications.stopWorkers();
      await jobs.stop(config.SHUTDOWN_TIMEOUT_MS);
    },
  };
};
