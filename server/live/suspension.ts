// The operator's suspension of every live order (POST /api/admin/live/suspend): a cached flag
// like the halt (system/cached-flag.ts), so every instance sees it and the order gate reads it for
// nothing.
import type { TLiveSuspendState } from '../../contracts/admin.ts';
import type { RequestOrigin } from '../audit/log.ts';
import { createCachedFlag, type CachedFlagOptions } from '../system/cached-flag.ts';

export interface LiveSuspension {
  isSuspended(): boolean;
  state(): TLiveSuspendState;
  set(opts: { suspended: boolean; actor: { id: number }; origin: RequestOrigin }): Promise<TLiveSuspendState>;
  /** Reads the stored state again (the change feed and the safety interval call this). */
  reload(): Promise<TLiveSuspendState>;
  close(): void;
}

export const createLiveSuspension = async (deps: Pick<CachedFlagOptions<'suspended'>, 'db' | 'clock' | 'changes' | 'logger' | 'safetyReloadMs'>): Promise<LiveSuspension> => {
  const flag = await createCachedFlag({
    ...deps,
    key: 'live_suspended',
    field: 'suspended',
    change: 'live_suspend',
    audit: { on: 'admin.live_suspended', off: 'admin.live_resumed' },
    name: 'the live suspension',
  });
  return {
    isSuspended: flag.isOn,
    state: flag.state,
    reload: flag.reload,
    close: flag.close,
    set: ({ suspended, actor, origin }) => flag.set({ on: suspended, actor, origin }),
  };
};
