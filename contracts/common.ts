// Shapes shared by every area: timestamps, pagination, strict body booleans, asset classes.
import { z } from 'zod';

/** ISO 8601 UTC timestamps travel as strings so REST and typed clients see the same value. */
export const ZTimestamp = z.string().meta({ format: 'date-time' });

export const ZAssetClass = z.enum(['crypto', 'us_equity', 'kr_equity']);
export type TAssetClass = z.infer<typeof ZAssetClass>;

/**
 * A boolean in a request body: strict, "false" is refused rather than read as true. Our REST
 * runtime coerces nothing, but trpc-to-openapi's own handler marks plain `z.boolean()` schemas
 * as coercing by mutating them; a union is left alone, so bodies stay strict either way.
 */
export const bodyBoolean = () => z.union([z.boolean()]);

/** Page query of every list route: `page` from 1, `size` 1–100 (default 20). */
export const ZPageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  size: z.coerce.number().int().min(1).max(100).default(20),
});
export type TPageQuery = z.infer<typeof ZPageQuery>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    size: z.number().int(),
  });

/**
 * Free text in a request: no NUL (Postgres text refuses it) and no unpaired surrogate (jsonb
 * refuses it), so such input is a 422 rather than a failed query.
 */
export const requestText = () =>
  z.string().refine((value) => !value.includes('\u0000') && value.isWellFormed(), 'must not contain NUL or unpaired surrogate characters');
