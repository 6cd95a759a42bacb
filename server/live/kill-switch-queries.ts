// SQL of the kill switch: the once-a-day critical alert rows written with its warnings and locks.
// The day-start snapshots and the lock itself are the controls' (controls/queries.ts).
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { criticalAlerts } from '../db/schema/index.ts';

export type TCriticalKind = 'daily_loss_warning' | 'kill_switch_lock';

/**
 * Records a critical alert unless this user, asset class, day and kind has one: true only for the
 * one call that wrote it (the unique key decides between instances).
 */
export const recordCriticalAlert = async (
  db: Queryable,
  values: { userId: number; assetClass: TAssetClass; day: string; kind: TCriticalKind; title: string; data: Record<string, unknown>; at: Date },
): Promise<boolean> =>
  (
    await db
      .insert(criticalAlerts)
      .values({ userId: values.userId, assetClass: values.assetClass, day: values.day, kind: values.kind, title: values.title, data: values.data, createdAt: values.at })
      .onConflictDoNothing()
      .returning({ id: criticalAlerts.id })
  ).length > 0;
