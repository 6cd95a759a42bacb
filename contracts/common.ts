// Shapes shared by every area: timestamps, pagination, strict body booleans, asset classes.
import { z } from 'zod';

/** ISO 8601 UTC timestamps travel as strings so REST and typed clients see the same value. */
export const ZTimestamp = z.string().meta({ format: 'date-time' });

export const ZAssetClass = z.enum(['crypto', 'us_equity', 'kr_equity']);
export type TAssetClass = z.infer<typeof ZAssetClass>;

/** The currency an asset class trades and settles in: every account, order and position of it. */
export const CURRENCY_OF_ASSET_CLASS: Record<TAssetClass, string> = { crypto: 'USDT', us_equity: 'USD', kr_equity: 'KRW' };

/**
 * A boolean in a request body: strict, "false" is refused rather than read as true. Our REST
 * runtime coerces nothing, but trpc-to-openapi's own handler marks plain `z.boolean()` schemas
 * as coercing by mutating them; a union is left alone, so bodies stay strict either way.
 */
export const bodyBoolean = () => z.union([z.boolean()]);

const CANONICAL_NATURAL = /^(?:0|[1-9][0-9]*)$/;
const CANONICAL_INTEGER = /^(?:0|-?[1-9][0-9]*)$/;

/** What zod-openapi hands an `override` function; typed here so the contract needs no cast. */
type SchemaOverride = (ctx: { jsonSchema: Record<string, unknown> }) => void;

/**
 * An integer path or query parameter (every id and page number uses this one helper). A URL
 * carries text, and only canonical decimal digits in range stand for a number: `0x10`, `1e1`,
 * `+1`, `01`, ` 1`, `1.0` and `-0` are 422, never read as 16, 10 or 1 the way `Number()` would.
 * Typed /trpc callers send the number itself, accepted when it is a safe integer in range.
 * `default` fills an absent parameter and is documented as such.
 */
export const intParam = ({ min, max, default: fallback }: { min: number; max: number; default?: number }) => {
  const digits = min < 0 ? CANONICAL_INTEGER : CANONICAL_NATURAL;
  const message = `must be an integer from ${min} to ${max}, written in plain decimal digits`;
  // The wire form is a string or a number (a union); the document says what a caller must send.
  const describe: SchemaOverride = ({ jsonSchema }) => {
    delete jsonSchema.anyOf;
    Object.assign(jsonSchema, { type: 'integer', minimum: min, maximum: max });
  };
  const schema = z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const n = typeof value === 'number' ? value : digits.test(value) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return n;
    })
    .meta({ override: describe });
  if (fallback === undefined) return schema;
  const withDefault: SchemaOverride = ({ jsonSchema }) => {
    jsonSchema.default = fallback;
  };
  // The default sits outside the transform, so zod-openapi does not render it by itself.
  return schema.default(fallback).meta({ override: withDefault });
};

/** Page query of every list route: `page` from 1, `size` 1–100 (default 20). */
export const ZPageQuery = z.object({
  page: intParam({ min: 1, max: 1_000_000, default: 1 }),
  size: intParam({ min: 1, max: 100, default: 20 }),
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
