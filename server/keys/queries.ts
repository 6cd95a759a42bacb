// SQL on exchange keys: the only module that knows their columns.
import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { exchangeKeys, type ExchangeKeyRow } from '../db/schema/index.ts';

type KeyInsert = Omit<typeof exchangeKeys.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>;

export const insertKey = async (db: Queryable, values: KeyInsert & { at: Date }): Promise<ExchangeKeyRow> => {
  const { at, ...fields } = values;
  const [row] = await db.insert(exchangeKeys).values({ ...fields, createdAt: at, updatedAt: at }).returning();
  return row!;
};

export const listKeys = (db: Queryable, { userId, assetClass }: { userId: number; assetClass?: TAssetClass }): Promise<ExchangeKeyRow[]> =>
  db
    .select()
    .from(exchangeKeys)
    .where(and(eq(exchangeKeys.userId, userId), assetClass === undefined ? undefined : eq(exchangeKeys.assetClass, assetClass)))
    .orderBy(asc(exchangeKeys.id));

/** The newest active key of the user for an asset class (of paper or live keys only, when asked): the one its broker uses. */
export const findActiveKey = async (db: Queryable, { userId, assetClass, paperMode }: { userId: number; assetClass: TAssetClass; paperMode?: boolean }): Promise<ExchangeKeyRow | undefined> =>
  (
    await db
      .select()
      .from(exchangeKeys)
      .where(and(eq(exchangeKeys.userId, userId), eq(exchangeKeys.assetClass, assetClass), eq(exchangeKeys.isActive, true), paperMode === undefined ? undefined : eq(exchangeKeys.paperMode, paperMode)))
      .orderBy(sql`${exchangeKeys.id} desc`)
      .limit(1)
  )[0];

export const isFingerprintHeldByOther = async (db: Queryable, { userId, fingerprint }: { userId: number; fingerprint: string }): Promise<boolean> =>
  (
    await db
      .select({ id: exchangeKeys.id })
      .from(exchangeKeys)
      .where(and(eq(exchangeKeys.apiKeyFingerprint, fingerprint), ne(exchangeKeys.userId, userId)))
      .limit(1)
  ).length > 0;

export const updateKey = async (db: Queryable, { userId, id, at, ...change }: { userId: number; id: number; at: Date; label?: string; isActive?: boolean }): Promise<ExchangeKeyRow | undefined> =>
  (
    await db
      .update(exchangeKeys)
      .set({ ...change, updatedAt: at })
      .where(and(eq(exchangeKeys.userId, userId), eq(exchangeKeys.id, id)))
      .returning()
  )[0];

export const deleteKey = async (db: Queryable, { userId, id }: { userId: number; id: number }): Promise<ExchangeKeyRow | undefined> =>
  (await db.delete(exchangeKeys).where(and(eq(exchangeKeys.userId, userId), eq(exchangeKeys.id, id))).returning())[0];

/** Every active key of the given asset classes, every user's: the accounts whose broker events are taken in. */
export const listActiveKeys = (db: Queryable, { assetClasses }: { assetClasses: readonly TAssetClass[] }): Promise<ExchangeKeyRow[]> =>
  db
    .select()
    .from(exchangeKeys)
    .where(and(eq(exchangeKeys.isActive, true), inArray(exchangeKeys.assetClass, [...assetClasses])))
    .orderBy(asc(exchangeKeys.id));
