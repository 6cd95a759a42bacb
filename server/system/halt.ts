// The operator halt switch. Kept in the database so every instance sees it, cached here and
// refreshed by the change feed, so checking it costs nothing per request.
import { eq } from 'drizzle-orm';
import type { THaltState } from '../../contracts/admin.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Db } from '../db/client.ts';
import { systemState } from '../db/schema/index.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { Logger } from '../observability/logger.ts';

const KEY = 'halt';

export interface HaltSwitch {
  isHalted(): boolean;
  state(): THaltState;
  set(opts: { halted: boolean; actorUserId: number; origin: RequestOrigin }): Promise<THaltState>;
}

export const createHaltSwitch = async ({ db, changes, logger }: { db: Db; changes: ChangeFeed; logger: Logger }): Promise<HaltSwitch> => {
  let current: THaltState = { halted: false, updated_at: null };
  const load = async () => {
    const [row] = await db.select().from(systemState).where(eq(systemState.key, KEY));
    current = { halted: row?.value.halted === true, updated_at: row ? row.updatedAt.toISOString() : null };
    return current;
  };
  await load();
  changes.subscribe((change) => {
    if (change.kind !== 'halt') return;
    load().catch((error: unknown) => logger.error({ err: error }, 'could not reload the halt state'));
  });

  return {
    isHalted: () => current.halted,
    state: () => current,
    set: async ({ halted, actorUserId, origin }) => {
      await db.transaction(async (tx) => {
        const now = new Date();
        await tx
          .insert(systemState)
          .values({ key: KEY, value: { halted }, updatedAt: now, updatedBy: String(actorUserId) })
          .onConflictDoUpdate({ target: systemState.key, set: { value: { halted }, updatedAt: now, updatedBy: String(actorUserId) } });
        await recordAudit(tx, { action: halted ? 'admin.halt' : 'admin.resume', actorUserId, origin });
        await changes.publish(tx, { kind: 'halt' });
      });
      // Do not wait for our own notification: this instance answers from the new state at once.
      return load();
    },
  };
};
