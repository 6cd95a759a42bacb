// The operator's simulated outages, one flag per asset class: kept in system_state so every
// instance fails alike, cached here so checking costs nothing per call. Like the halt switch, the
// cache follows each write through the change feed, reloads after a reconnect (`resync`), and
// re-reads on a slow safety interval.
import { ZAssetClass, type TAssetClass } from '../../../contracts/common.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { ChangeFeed } from '../../events/changes.ts';
import type { Logger } from '../../observability/logger.ts';
import { readState, writeState } from '../../system/queries.ts';

const ASSET_CLASSES = ZAssetClass.options;
const keyOf = (assetClass: TAssetClass) => `sim_outage:${assetClass}`;

export interface Outages {
  isDown(assetClass: TAssetClass): boolean;
  all(): Record<TAssetClass, boolean>;
  set(opts: { assetClass: TAssetClass; down: boolean; by: string }): Promise<Record<TAssetClass, boolean>>;
  reload(): Promise<void>;
  close(): void;
}

export const createOutages = async ({ db, clock, changes, logger, reloadMs }: { db: Db; clock: Clock; changes: ChangeFeed; logger: Logger; reloadMs: number }): Promise<Outages> => {
  // One key per asset class, so two operators flipping different classes cannot undo each other.
  const current = new Map<TAssetClass, { down: boolean; version: number }>(ASSET_CLASSES.map((assetClass) => [assetClass, { down: false, version: -1 }]));
  /** Keeps the newest version seen, whatever order reads and writes finish in. */
  const accept = (assetClass: TAssetClass, down: boolean, version: number) => {
    if (version >= current.get(assetClass)!.version) current.set(assetClass, { down, version });
  };
  const reload = async () => {
    for (const assetClass of ASSET_CLASSES) {
      const stored = await readState(db, keyOf(assetClass));
      accept(assetClass, stored?.value.down === true, stored?.version ?? 0);
    }
  };
  await reload();

  const reloadLogged = () => {
    reload().catch((error: unknown) => logger.error({ err: error }, 'could not reload the simulated outages'));
  };
  const unsubscribe = changes.subscribe((change) => {
    if (change.kind === 'sim_outage' || change.kind === 'resync') reloadLogged();
  });
  const timer = setInterval(reloadLogged, reloadMs);
  timer.unref();

  const all = () => Object.fromEntries(ASSET_CLASSES.map((assetClass) => [assetClass, current.get(assetClass)!.down])) as Record<TAssetClass, boolean>;
  return {
    isDown: (assetClass) => current.get(assetClass)!.down,
    all,
    reload,
    close: () => {
      clearInterval(timer);
      unsubscribe();
    },
    set: async ({ assetClass, down, by }) => {
      const stored = await db.transaction(async (tx) => {
        const row = await writeState(tx, { key: keyOf(assetClass), value: { down }, at: clock.now(), by });
        await changes.publish(tx, { kind: 'sim_outage' });
        return row;
      });
      accept(assetClass, stored.value.down === true, stored.version);
      return all();
    },
  };
};
