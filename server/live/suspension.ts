// The operator's suspension of every live order (POST /api/admin/live/suspend). Kept in the
// database like the halt, so every instance sees it; cached here, so the order gate reads it for
// nothing. The copy follows the change feed, reloads after a reconnect and at a slow safety
// interval, and the stored version keeps an older read from overwriting a newer one.
import type { TLiveSuspendState } from '../../contracts/admin.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { Logger } from '../observability/logger.ts';
import { readState, writeState, type StoredState } from '../system/queries.ts';

const KEY = 'live_suspended';

export interface LiveSuspension {
  isSuspended(): boolean;
  state(): TLiveSuspendState;
  set(opts: { suspended: boolean; actor: { id: number }; origin: RequestOrigin }): Promise<TLiveSuspendState>;
  /** Reads the stored state again (the change feed and the safety interval call this). */
  reload(): Promise<TLiveSuspendState>;
  close(): void;
}

interface Versioned {
  state: TLiveSuspendState;
  version: number;
}

const fromStored = (stored: StoredState | undefined): Versioned => ({
  state: { suspended: stored?.value.suspended === true, updated_at: stored ? stored.updatedAt.toISOString() : null },
  version: stored?.version ?? 0,
});

export const createLiveSuspension = async ({ db, clock, changes, logger, safetyReloadMs }: { db: Db; clock: Clock; changes: ChangeFeed; logger: Logger; safetyReloadMs: number }): Promise<LiveSuspension> => {
  let current: Versioned = { state: { suspended: false, updated_at: null }, version: -1 };
  const accept = (next: Versioned) => {
    if (next.version >= current.version) current = next;
    return current.state;
  };
  const reload = async () => accept(fromStored(await readState(db, KEY)));
  await reload();
  const reloadLogged = () => {
    reload().catch((error: unknown) => logger.error({ err: error }, 'could not reload the live suspension'));
  };
  changes.subscribe((change) => {
    if (change.kind === 'live_suspend' || change.kind === 'resync') reloadLogged();
  });
  const timer = setInterval(reloadLogged, safetyReloadMs);
  timer.unref();

  return {
    isSuspended: () => current.state.suspended,
    state: () => current.state,
    reload,
    close: () => clearInterval(timer),
    set: async ({ suspended, actor, origin }) => {
      const at = clock.now();
      const stored = await db.transaction(async (tx) => {
        const row = await writeState(tx, { key: KEY, value: { suspended }, at, by: String(actor.id) });
        await recordAudit(tx, { action: suspended ? 'admin.live_suspended' : 'admin.live_resumed', actorUserId: actor.id, origin, at });
        await changes.publish(tx, { kind: 'live_suspend' });
        return row;
      });
      // This instance answers from the new state at once, without waiting for its own notification.
      return accept(fromStored(stored));
    },
  };
};
