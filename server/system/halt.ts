// The operator halt switch: a cached flag (cached-flag.ts), so every instance sees it and checking
// it costs nothing per request. While halted every route answers 503 SERVICE_HALTED except the
// ones DESIGN keeps open.
import type { THaltState } from '../../contracts/admin.ts';
import type { RequestOrigin } from '../audit/log.ts';
import { createCachedFlag, type CachedFlagOptions } from './cached-flag.ts';

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

export const createHalt = async (deps: Pick<CachedFlagOptions<'halted'>, 'db' | 'clock' | 'changes' | 'logger' | 'safetyReloadMs'>): Promise<Halt> => {
  const flag = await createCachedFlag({ ...deps, key: 'halt', field: 'halted', change: 'halt', audit: { on: 'admin.halt', off: 'admin.resume' }, name: 'the halt state' });
  return {
    isHalted: flag.isOn,
    state: flag.state,
    reload: flag.reload,
    onChange: flag.onChange,
    close: flag.close,
    set: ({ halted, actor, origin }) => flag.set({ on: halted, actor, origin }),
  };
};
