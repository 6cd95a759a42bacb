// Shapes shared by every area: timestamps, pagination, strict body booleans, asset classes, and
// the rule every request string meets.
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

/** What the database refuses in text and in jsonb: NUL (`0x00`) and an unpaired UTF-16 surrogate. */
export const isStorableText = (value: string): boolean => !value.includes('\u0000') && value.isWellFormed();
export const UNSTORABLE_TEXT = 'must not contain NUL or unpaired surrogate characters';

/**
 * Every string of a request (body, query or path; a path or query parameter that names an id or
 * a number too) is one of these, so a NUL or an unpaired surrogate is 422 `VALIDATION_ERROR`
 * naming its field before anything reaches the database (Postgres text refuses NUL; jsonb
 * refuses both). test/unit/contract-strings.test.ts fails on any request string without it.
 */
export const requestText = () => z.string().refine(isStorableText, UNSTORABLE_TEXT);

/** The same rule on a string format (`z.email()`, `z.url()`, `z.uuid()`, ...): a URL may carry a NUL. */
export const storableText = <T extends z.ZodType<string>>(schema: T): T => schema.refine(isStorableText, UNSTORABLE_TEXT);

/** Where a JSON value holds text the database refuses (a string or an object key), else undefined. */
const unstorablePathIn = (root: unknown): { path: (string | number)[]; key: boolean } | undefined => {
  // Iterative: a body's depth is bounded before parsing, but this walk need not rely on it.
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (!isStorableText(value)) return { path, key: false };
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (!isStorableText(key)) return { path, key: true };
        stack.push({ value: item, path: [...path, key] });
      }
    }
  }
  return undefined;
};

/**
 * A free-form JSON value of a request (a strategy's parameters), stored as jsonb: no string and
 * no object key in it, at any depth, may hold what `requestText` refuses.
 */
export const requestJson = () =>
  z.unknown().superRefine((value, ctx) => {
    const found = unstorablePathIn(value);
    if (found) ctx.addIssue({ code: 'custom', path: found.path, message: found.key ? `keys ${UNSTORABLE_TEXT}` : UNSTORABLE_TEXT });
  });

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
    .union([requestText(), z.number()])
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
/** A user named in a path (`/api/admin/users/{user_id}/...`): one name and one rule for every such route. */
export const ZUserIdPath = z.object({ user_id: intParam({ min: 1, max: 2_147_483_647 }) });

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
