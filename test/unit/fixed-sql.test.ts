// fixedSql builds the same text and parameters as drizzle's sql, whatever the values, nesting and
// optional fragments, and keeps the text per shape: two shapes never share one.
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { orders } from '../../server/db/schema/index.ts';
import { fixedSql, FixedSQL } from '../../server/db/fixed-sql.ts';

const dialect = new PgDialect();
/** The text and the parameters (typings are for drivers other than ours, which read none). */
const built = (query: SQL) => {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return { text, params };
};

/** The same statement written with either tag. */
const statement = (tag: typeof sql | typeof fixedSql, userId: number, ids: string[], claim: boolean, at: Date | null, note: string | undefined) => {
  const inner = tag`select ${ids.length}::integer as n, ${JSON.stringify(ids)}::jsonb as ids`;
  return tag`with ${claim ? tag`claim as (update ${orders} set ${orders.status} = ${'pending'} where ${orders.userId} = ${userId} returning 1),` : tag``}
    picked as (${inner})
    select ${at}::timestamptz as at, ${note} ${claim ? tag`(select count(*) from claim)` : tag`0`} as claimed from picked`;
};

describe('fixedSql', () => {
  it('builds what sql builds, for every shape and any values', () => {
    let compared = 0;
    for (const claim of [true, false, true, false])
      for (const [userId, ids, at, note] of [
        [1, ['a'], new Date('2026-01-02T03:04:05Z'), undefined],
        [2, [], null, undefined],
        [3, ['x', 'y', "it's"], new Date(0), undefined],
      ] as const) {
        const fixed = statement(fixedSql, userId, [...ids], claim, at, note);
        expect(fixed).toBeInstanceOf(FixedSQL);
        expect(built(fixed)).toEqual(built(statement(sql, userId, [...ids], claim, at, note)));
        compared++;
      }
    expect(compared).toBe(12);
  });

  it('gives values that drizzle writes into the text (arrays, plain fragments) the ordinary build, every time', () => {
    for (const ids of [[1], [1, 2, 3]]) {
      const withList = fixedSql`select * from ${orders} where ${orders.userId} in ${ids} and ${sql`true`}`;
      expect(withList).not.toBeInstanceOf(FixedSQL);
      expect(built(withList)).toEqual(built(sql`select * from ${orders} where ${orders.userId} in ${ids} and ${sql`true`}`));
    }
  });

  it('nests inside a plain sql fragment as its ordinary build', () => {
    const inner = fixedSql`select ${5}::integer, ${orders.clientOrderId} from ${orders}`;
    expect(built(sql`with x as (${inner}) select ${'tail'}`)).toEqual(built(sql`with x as (${sql`select ${5}::integer, ${orders.clientOrderId} from ${orders}`}) select ${'tail'}`));
  });
});
