// SQL on the instrument registry: the only module that knows its columns.
import { and, asc, count, eq, ilike, or, type SQL } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { instruments, type InstrumentRow } from '../db/schema/index.ts';

type InstrumentInsert = typeof instruments.$inferInsert;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const filterOf = ({ assetClass, q }: { assetClass?: TAssetClass; q?: string }): SQL | undefined => {
  const pattern = q === undefined ? undefined : `%${escapeLike(q)}%`;
  return and(
    assetClass === undefined ? undefined : eq(instruments.assetClass, assetClass),
    pattern === undefined ? undefined : or(ilike(instruments.symbol, pattern), ilike(instruments.name, pattern)),
  );
};

export const listInstruments = async (
  db: Queryable,
  { assetClass, q, page, size }: { assetClass?: TAssetClass; q?: string; page: number; size: number },
): Promise<{ rows: InstrumentRow[]; total: number }> => {
  const where = filterOf({ assetClass, q });
  const rows = await db
    .select()
    .from(instruments)
    .where(where)
    .orderBy(asc(instruments.assetClass), asc(instruments.symbol))
    .limit(size)
    .offset((page - 1) * size);
  const [total] = await db.select({ n: count() }).from(instruments).where(where);
  return { rows, total: total?.n ?? 0 };
};

export const findInstrument = async (db: Queryable, { assetClass, symbol }: { assetClass: TAssetClass; symbol: string }): Promise<InstrumentRow | undefined> =>
  (await db.select().from(instruments).where(and(eq(instruments.assetClass, assetClass), eq(instruments.symbol, symbol))))[0];

export const countInstruments = async (db: Queryable): Promise<number> => (await db.select({ n: count() }).from(instruments))[0]?.n ?? 0;

/** Inserts or replaces one instrument; tells which it was. */
export const upsertInstrument = async (db: Queryable, values: Omit<InstrumentInsert, 'createdAt' | 'updatedAt'> & { at: Date }): Promise<{ row: InstrumentRow; created: boolean }> => {
  const { at, ...fields } = values;
  const existing = await findInstrument(db, { assetClass: fields.assetClass, symbol: fields.symbol });
  const [row] = await db
    .insert(instruments)
    .values({ ...fields, createdAt: at, updatedAt: at })
    .onConflictDoUpdate({ target: [instruments.assetClass, instruments.symbol], set: { ...fields, updatedAt: at } })
    .returning();
  return { row: row!, created: existing === undefined };
};

/** Adds instruments that are not there yet; returns how many were added. */
export const insertMissingInstruments = async (db: Queryable, rows: (Omit<InstrumentInsert, 'createdAt' | 'updatedAt'> & { at: Date })[]): Promise<number> => {
  if (rows.length === 0) return 0;
  const inserted = await db
    .insert(instruments)
    .values(rows.map(({ at, ...fields }) => ({ ...fields, createdAt: at, updatedAt: at })))
    .onConflictDoNothing()
    .returning({ symbol: instruments.symbol });
  return inserted.length;
};
