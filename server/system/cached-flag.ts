// A service-wide switch kept in system_state, so every instance sees it, and cached in each
// process, so reading it costs nothing per request: the halt (system/halt.ts) and the live
// suspension (live/suspension.ts). The copy follows the change feed, reloads after every
// reconnect of the feed and at a slow safety interval (a bound on a missed notification, not the
// mechanism), and the stored version keeps an older read from overwriting a newer one, whatever
// order reads and writes finish in.
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { Change, ChangeFeed } from '../events/changes.ts';
import { createListeners } from '../listeners.ts';
import type { Logger } from '../observability/logger.ts';
import { readState, writeState, type StoredState } from './queries.ts';

/** The switch as its routes answer it: `{ [field]: on, updated_at }`. */
export type FlagState<F extends string> = { [K in F]: boolean } & { updated_at: string | null };

/** Its parts are plain functions, so a wrapper may hand them on as they are. */
export interface CachedFlag<F extends string> {
  isOn: () => boolean;
  state: () => FlagState<F>;
  /** Writes the switch with its audit record and announces it; this instance answers from it at once. */
  set: (opts: { on: boolean; actor: { id: number }; origin: RequestOrigin }) => Promise<FlagState<F>>;
  /** Reads the stored state again (the change feed and the safety interval call this). */
  reload: () => Promise<FlagState<F>>;
  /** Calls the listener whenever the switch flips in this process's copy. */
  onChange: (listener: (on: boolean) => void) => () => void;
  close: () => void;
}

export interface CachedFlagOptions<F extends string> {
  db: Db;
  clock: Clock;
  changes: ChangeFeed;
  logger: Logger;
  safetyReloadMs: number;
  /** Its row in system_state. */
  key: string;
  /** The field of its stored value and of its answer. */
  field: F;
  /** The change a write announces to every instance. */
  change: Extract<Change, { kind: 'halt' | 'live_suspend' }>['kind'];
  /** The audit actions of turning it on and off. */
  audit: { on: string; off: string };
  /** What the log calls it. */
  name: string;
}

export const createCachedFlag = async <F extends string>({ db, clock, changes, logger, safetyReloadMs, key, field, change, audit, name }: CachedFlagOptions<F>): Promise<CachedFlag<F>> => {
  const stateOf = (on: boolean, updatedAt: string | null) => ({ [field]: on, updated_at: updatedAt }) as FlagState<F>;
  const fromStored = (stored: StoredState | undefined) => ({
    state: stateOf(stored?.value[field] === true, stored ? stored.updatedAt.toISOString() : null),
    version: stored?.version ?? 0,
  });
  let current = { state: stateOf(false, null), version: -1 };
  const listeners = createListeners<[on: boolean]>((error) => logger.error({ err: error }, `${key} listener failed`));
  /** Keeps the newest state seen, whatever order reads and writes finish in. */
  const accept = (next: typeof current) => {
    if (next.version < current.version) return current.state;
    const flipped = next.state[field] !== current.state[field];
    current = next;
    if (flipped) listeners.publish(next.state[field]);
    return current.state;
  };
  const reload = async () => accept(fromStored(await readState(db, key)));
  await reload();

  const reloadLogged = () => {
    reload().catch((error: unknown) => logger.error({ err: error }, `could not reload ${name}`));
  };
  changes.subscribe((seen) => {
    if (seen.kind === change || seen.kind === 'resync') reloadLogged();
  });
  const timer = setInterval(reloadLogged, safetyReloadMs);
  timer.unref();

  return {
    isOn: () => current.state[field],
    state: () => current.state,
    reload,
    onChange: (listener) => listeners.add(listener),
    close: () => clearInterval(timer),
    set: async ({ on, actor, origin }) => {
      const at = clock.now();
      const stored = await db.transaction(async (tx) => {
        const row = await writeState(tx, { key, value: { [field]: on }, at, by: String(actor.id) });
        await recordAudit(tx, { action: on ? audit.on : audit.off, actorUserId: actor.id, origin, at });
        await changes.publish(tx, { kind: change });
        return row;
      });
      // This instance answers from the new state at once, without waiting for its own notification.
      return accept(fromStored(stored));
    },
  };
};
