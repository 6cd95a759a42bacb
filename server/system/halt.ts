// The operator halt switch. Kept in the database so every instance sees it, cached here so that
// checking it costs nothing per request. The cached copy follows the change feed; a reload after
// every reconnect of the feed and a slow safety interval bound how long a missed notification
// can matter, and the stored version keeps an older read from overwriting a newer one.
import type { THaltState } from '../../contracts/admin.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { Logger } from '../observability/logger.ts';
import { readState, writeState, type StoredState } from './queries.ts';

const KEY = 'halt';

export interface Halt {
  isHalted(): boolean;
  state(): THaltState;
  set(opts: { halted: boolean; actor: { id: number }; origin: RequestOrigin }): Promise<THaltState>;
  /** Reads the stored state again (the change feed and the safety interval call this). */
  reload(): Promise<THaltState>;
  /** Calls the listener whenever the halted flag flips in this process's copy. */
  onChange(listener: (halted: boolean) => void): () => void;
  close(): void;
}

interface Versioned {
  state: THaltState;
  version: number;
}

const fromStored = (stored: StoredState | undefined): Versioned => ({
  state: { halted: stored?.value.halted === true, updated_at: stored ? stored.updatedAt.toISOString() : null },
  version: stored?.version ?? 0,
});

export const createHalt = async ({ db, clock, changes, logger, safetyReloadMs }: { db: Db; clock: Clock; changes: ChangeFeed; logger: Logger; safetyReloadMs: number }): Promise<Halt> => {
  let current: Versioned = { state: { halted: false, updated_at: null }, version: -1 };
  const listeners = new Set<(halted: boolean) => void>();
  /** Keeps the newest state seen, whatever order reads and writes finish in. */
  const accept = (next: Versioned) => {
    if (next.version < current.version) return current.state;
    const flipped = next.state.halted !== current.state.halted;
    current = next;
    if (flipped) {
      for (const listener of listeners) {
        try {
          listener(next.state.halted);
        } catch (error) {
          logger.error({ err: error }, 'halt listener failed');
        }
      }
    }
    return current.state;
  };
  const reload = async () => accept(fromStored(await readState(db, KEY)));
  await reload();

  const reloadLogged = () => {
    reload().catch((error: unknown) => logger.error({ err: error }, 'could not reload the halt state'));
  };
  changes.subscribe((change) => {
    if (change.kind === 'halt' || change.kind === 'resync') reloadLogged();
  });
  const timer = setInterval(reloadLogged, safetyReloadMs);
  timer.unref();

  return {
    isHalted: () => current.state.halted,
    state: () => current.state,
    reload,
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => clearInterval(timer),
    set: async ({ halted, actor, origin }) => {
      const at = clock.now();
      const stored = await db.transaction(async (tx) => {
        const row = await writeState(tx, { key: KEY, value: { halted }, at, by: String(actor.id) });
        await recordAudit(tx, { action: halted ? 'admin.halt' : 'admin.resume', actorUserId: actor.id, origin, at });
        await changes.publish(tx, { kind: 'halt' });
        return row;
      });
      // This instance answers from the new state at once, without waiting for its own notification.
      return accept(fromStored(stored));
    },
  };
};
