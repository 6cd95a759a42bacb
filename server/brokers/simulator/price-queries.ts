// SQL of the simulator's stored prices: an operator's price and the price walk's last tick per
// symbol. The only module that writes sim_prices; the books read them with their positions.
import { and, eq } from 'drizzle-orm';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Queryable } from '../../db/client.ts';
import { simPrices } from '../../db/schema/index.ts';
import type { SimPriceRow } from './queries.ts';

export const findPrice = async (db: Queryable, { assetClass, symbol }: { assetClass: TAssetClass; symbol: string }): Promise<SimPriceRow | undefined> =>
  (await db.select().from(simPrices).where(and(eq(simPrices.assetClass, assetClass), eq(simPrices.symbol, symbol))))[0];

/** Sets (or, with null, clears) an operator's price. */
export const saveAdminPrice = async (db: Queryable, { assetClass, symbol, price, at }: { assetClass: TAssetClass; symbol: string; price: string | null; at: Date }): Promise<void> => {
  await db
    .insert(simPrices)
    .values({ assetClass, symbol, adminPrice: price, updatedAt: at })
    .onConflictDoUpdate({ target: [simPrices.assetClass, simPrices.symbol], set: { adminPrice: price, updatedAt: at } });
};

export const saveTickPrice = async (db: Queryable, { assetClass, symbol, price, at }: { assetClass: TAssetClass; symbol: string; price: string; at: Date }): Promise<void> => {
  await db
    .insert(simPrices)
    .values({ assetClass, symbol, tickPrice: price, updatedAt: at })
    .onConflictDoUpdate({ target: [simPrices.assetClass, simPrices.symbol], set: { tickPrice: price, updatedAt: at } });
};
