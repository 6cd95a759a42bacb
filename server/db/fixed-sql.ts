// `fixedSql`: drizzle's `sql` template for the statements every order runs, whose text is built
// once per shape instead of on every call.
//
// drizzle builds a statement's text anew each time: the template becomes chunks, and the chunks
// are walked (nested fragments, tables, columns, escaping) into the text and its parameters. For
// an order that is most of drizzle's share of the CPU and of the garbage, for a text that never
// changes. A `fixedSql` statement records only its shape (which template, which nested fixed
// fragments, which tables and columns) and its values in order; the text is built the first time
// a shape is seen, by drizzle itself with placeholders for the values, and kept.
//
// What can be part of a shape: values (parameters), tables and columns (module-level objects, so
// the same each call) and other `fixedSql` fragments. Anything else drizzle accepts (a plain `sql`
// fragment, an array that drizzle spreads into a list, a `Param` with an encoder, `sql.raw`) is
// built per call and could make a new shape each time: such a statement is built the ordinary
// way, with no cache, and nothing changes for it but the speed.
import { Column, is, Placeholder, SQL, sql, Table, type BuildQueryConfig, type QueryWithTypings } from 'drizzle-orm';

/** A small number per template and per table or column, for shape keys. */
const ids = new WeakMap<object, number>();
let nextId = 0;
const idOf = (value: object) => {
  let id = ids.get(value);
  if (id === undefined) {
    id = nextId++;
    ids.set(value, id);
  }
  return id;
};

/** Shape key -> the statement's text, built once. A statement whose text cannot be kept maps to null. */
const texts = new Map<string, string | null>();

/** Something drizzle puts into the text itself rather than passing as a parameter. */
const isEntity = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !(value instanceof Date) && (is(value, Table) || is(value, Column) || typeof (value as { getSQL?: unknown }).getSQL === 'function');

export class FixedSQL extends SQL {
  /** Which template, which nested shapes, tables and columns: equal keys build equal texts. */
  readonly key: string;
  readonly strings: TemplateStringsArray;
  readonly parts: readonly unknown[];
  /** The values of the whole statement, nested fragments' included, in the order of the text's parameters. */
  readonly values: readonly unknown[];

  constructor(key: string, strings: TemplateStringsArray, parts: readonly unknown[], values: readonly unknown[]) {
    super([]);
    this.key = key;
    this.strings = strings;
    this.parts = parts;
    this.values = values;
  }

  /** The statement as drizzle would build it, each value a placeholder named by its position (or itself). */
  plain(valueOf: (value: unknown, position: number) => unknown, position = { next: 0 }): SQL {
    return sql(
      this.strings,
      ...this.parts.map((part) => (part instanceof FixedSQL ? part.plain(valueOf, position) : part === undefined || isEntity(part) ? part : valueOf(part, position.next++))),
    );
  }

  // drizzle calls this on a statement it runs, and gives a placeholder back among the params as
  // itself: its internals, which keep the text (contract test in
  // test/integration/db-internals.test.ts).
  override toQuery(config: BuildQueryConfig): QueryWithTypings {
    let text = texts.get(this.key);
    if (text === undefined) {
      const built = this.plain((_value, position) => sql.placeholder(String(position))).toQuery({ ...config, paramStartIndex: { value: 0 } });
      // Kept only when every parameter is one of the values, in order: the text then fits any values of this shape.
      const inOrder = built.params.length === this.values.length && built.params.every((param, index) => param instanceof Placeholder && param.name === String(index));
      text = inOrder ? built.sql : null;
      texts.set(this.key, text);
    }
    if (text === null) return this.plain((value) => value).toQuery(config);
    return { sql: text, params: [...this.values] };
  }
}

// drizzle reads `queryChunks` when a fixed statement is nested in a plain `sql` fragment: there
// it is given the chunks of the statement built the ordinary way. (An accessor on the prototype,
// set here because TypeScript's SQL declares the field as a plain property; SQL's constructor
// assigns it, which the setter takes and ignores.) Both are drizzle's internals: contract test in
// test/integration/db-internals.test.ts.
Object.defineProperty(FixedSQL.prototype, 'queryChunks', {
  get(this: FixedSQL) {
    return this.plain((value) => value).queryChunks;
  },
  set() {},
});

/**
 * `sql`, with the text built once per shape (see the top of this file). Use it for statements run
 * on every order, and for the fragments nested in them.
 */
export const fixedSql = (strings: TemplateStringsArray, ...parts: unknown[]): SQL => {
  let key = String(idOf(strings));
  const values: unknown[] = [];
  for (const part of parts) {
    if (part instanceof FixedSQL) {
      key += `(${part.key})`;
      values.push(...part.values);
    } else if (is(part, Table) || is(part, Column)) {
      key += `,t${idOf(part)}`;
    } else if (part === undefined) {
      // drizzle writes nothing for it.
      key += ',u';
    } else if (isEntity(part) || Array.isArray(part)) {
      // Built per call: no shape to keep (see the top of this file).
      return sql(strings, ...parts.map((each) => (each instanceof FixedSQL ? each.plain((value) => value) : each)));
    } else {
      key += ',v';
      values.push(part);
    }
  }
  return new FixedSQL(key, strings, parts, values);
};
