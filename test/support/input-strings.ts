// Where a procedure's input schema takes text: every string (a record's keys included) and every
// free-form JSON value, at any depth, found by walking the zod schema. The contract test checks
// that each carries the rule of contracts/common.ts; the shared security suite sends each one a
// NUL and a lone surrogate.
import type { z } from 'zod';

/** One step from a value into its parts: an object's field, an array's element, a record's key or value. */
export type Segment = { field: string } | { element: true } | { key: true } | { value: true };

export interface InputText {
  path: Segment[];
  /** `text`: a string schema; `json`: a free-form value (`z.unknown()`, `z.any()`) whose strings reach jsonb. */
  kind: 'text' | 'json';
  schema: z.ZodType;
}

interface Def {
  type: string;
  shape?: Record<string, unknown>;
  catchall?: unknown;
  keyType?: unknown;
  valueType?: unknown;
  element?: unknown;
  options?: unknown[];
  left?: unknown;
  right?: unknown;
  innerType?: unknown;
  in?: unknown;
  out?: unknown;
  getter?: () => unknown;
}

const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** Kinds that hold no text a caller chose: an enum or a literal is one of the contract's own values. */
const TEXTLESS = new Set(['number', 'boolean', 'bigint', 'null', 'undefined', 'void', 'never', 'nan', 'date', 'enum', 'literal', 'transform']);
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'nonoptional', 'catch', 'success']);

/**
 * The text-taking places of `schema`. A kind the walk does not know is listed in `unknownKinds`
 * rather than skipped, so that a new kind of schema fails the contract test until it is handled.
 */
export const inputTextsOf = (schema: unknown): { texts: InputText[]; unknownKinds: string[] } => {
  const texts: InputText[] = [];
  const unknownKinds: string[] = [];
  const seen = new Set<unknown>();
  const walk = (node: unknown, path: Segment[]): void => {
    const def = defOf(node);
    if (def.type === 'string' || def.type === 'template_literal') return void texts.push({ path, kind: 'text', schema: node as z.ZodType });
    if (def.type === 'unknown' || def.type === 'any') return void texts.push({ path, kind: 'json', schema: node as z.ZodType });
    if (TEXTLESS.has(def.type)) return;
    if (WRAPPERS.has(def.type)) return walk(def.innerType, path);
    switch (def.type) {
      case 'object':
        for (const [name, field] of Object.entries(def.shape ?? {})) walk(field, [...path, { field: name }]);
        // A catchall takes fields of any name: strict objects have `never` here, plain ones none.
        if (def.catchall !== undefined && defOf(def.catchall).type !== 'never') unknownKinds.push(`catchall at ${describePath(path)}`);
        return;
      case 'record':
        walk(def.keyType, [...path, { key: true }]);
        return walk(def.valueType, [...path, { value: true }]);
      case 'array':
        return walk(def.element, [...path, { element: true }]);
      case 'union':
        for (const option of def.options ?? []) walk(option, path);
        return;
      case 'intersection':
        walk(def.left, path);
        return walk(def.right, path);
      case 'pipe':
        walk(def.in, path);
        return walk(def.out, path);
      case 'lazy':
        if (seen.has(node)) return;
        seen.add(node);
        return walk(def.getter!(), path);
      default:
        unknownKinds.push(`${def.type} at ${describePath(path)}`);
    }
  };
  walk(schema, []);
  return { texts, unknownKinds };
};

/** `bars.[].date`, `strategy_params.{key}`: how a test names a place. */
export const describePath = (path: Segment[]): string =>
  path.map((segment) => ('field' in segment ? segment.field : 'element' in segment ? '[]' : 'key' in segment ? '{key}' : '{value}')).join('.') || '(input)';

/** The input's top-level fields (under its optional, default, ... wrappers), or none when it is not an object. */
export const topLevelFieldsOf = (schema: unknown): string[] => {
  let def = defOf(schema);
  while (WRAPPERS.has(def.type) || def.type === 'pipe') def = defOf(def.type === 'pipe' ? def.in : def.innerType);
  return def.type === 'object' ? Object.keys(def.shape ?? {}) : [];
};

/** The record key a probe uses where a path goes through a record's value. */
const PROBE_KEY = 'k';

/**
 * The smallest JSON value that holds `bad` at `path`: as the value there, or as the key of a
 * `{key}` step (a free-form `json` place takes `bad` inside an object or as a key too, see
 * `badValuesFor`). `errorPath` is the dotted path a field error about it names, or a place inside
 * it (`bars.0.date`).
 */
export const placeAt = (path: Segment[], leaf: unknown, bad: string): { value: unknown; errorPath: string } => {
  const build = (index: number): unknown => {
    if (index === path.length) return leaf;
    const segment = path[index]!;
    if ('field' in segment) return { [segment.field]: build(index + 1) };
    if ('element' in segment) return [build(index + 1)];
    if ('key' in segment) return { [bad]: 1 };
    return { [PROBE_KEY]: build(index + 1) };
  };
  const named: string[] = [];
  for (const segment of path) {
    // An invalid key is reported under the key itself, which the error envelope shows escaped.
    if ('key' in segment) break;
    named.push('field' in segment ? segment.field : 'element' in segment ? '0' : PROBE_KEY);
  }
  return { value: build(0), errorPath: named.join('.') };
};

/** What a probe puts at a place: the text itself, and for a free-form value the text deep inside it and as a key. */
export const badValuesFor = (kind: InputText['kind'], bad: string): unknown[] => (kind === 'text' ? [bad] : [bad, { deep: [bad] }, { [bad]: 1 }]);
