// The string rule of contracts/common.ts, and a lint over every procedure's input: each string
// (record keys included) and each free-form JSON value a caller can send refuses a NUL and an
// unpaired surrogate, the text Postgres cannot store, so a new field cannot miss the rule.
import { describe, expect, it } from 'vitest';
import { intParam, requestJson, requestText, storableText, UNSTORABLE_TEXT } from '../../contracts/common.ts';
import { appRouter } from '../../server/routers/index.ts';
import { describePath, inputTextsOf, type InputText } from '../support/input-strings.ts';
import { z } from 'zod';

const UNSTORABLE = ['\u0000', 'ab\u0000cd', '\ud800', 'ab\udc00', 'a\ud800\ud800b'];

const messagesOf = (schema: z.ZodType, value: unknown) => schema.safeParse(value).error?.issues.map((issue) => issue.message) ?? [];

describe('requestText', () => {
  it('refuses NUL and unpaired surrogates, and takes any other text, paired surrogates and other controls included', () => {
    for (const value of UNSTORABLE) expect(messagesOf(requestText(), value)).toEqual([UNSTORABLE_TEXT]);
    for (const value of ['', 'plain', 'emoji \ud83d\ude00', 'tab\tnewline\n\u0001', '한국어']) expect(requestText().safeParse(value).success).toBe(true);
  });

  it('holds on string formats through storableText: a URL may carry a NUL in its path', () => {
    const url = z.url({ protocol: /^https?$/ });
    expect(url.safeParse('https://example.com/a\u0000b').success).toBe(true);
    expect(messagesOf(storableText(url), 'https://example.com/a\u0000b')).toEqual([UNSTORABLE_TEXT]);
    expect(storableText(url).safeParse('https://example.com/a').success).toBe(true);
  });

  it('an integer parameter sent as text with a NUL says so rather than "invalid input"', () => {
    expect(messagesOf(intParam({ min: 1, max: 10 }), '1\u0000')).toEqual([UNSTORABLE_TEXT]);
    expect(intParam({ min: 1, max: 10 }).safeParse('7').data).toBe(7);
  });
});

describe('requestJson', () => {
  const schema = z.object({ params: z.record(requestText(), requestJson()) });
  const issuesOf = (value: unknown) => schema.safeParse(value).error?.issues.map(({ path, message }) => ({ path, message }));

  it('finds the text at any depth and names where it is', () => {
    expect(issuesOf({ params: { fast: 'a\u0000' } })).toEqual([{ path: ['params', 'fast'], message: UNSTORABLE_TEXT }]);
    expect(issuesOf({ params: { fast: { list: [1, 'ok', '\ud800'] } } })).toEqual([{ path: ['params', 'fast', 'list', 2], message: UNSTORABLE_TEXT }]);
    expect(issuesOf({ params: { fast: { ['bad\u0000key']: 1 } } })).toEqual([{ path: ['params', 'fast'], message: `keys ${UNSTORABLE_TEXT}` }]);
  });

  it('takes numbers, booleans, null and storable text as they are', () => {
    const value = { params: { fast: 10, on: true, none: null, name: 'sma \ud83d\ude00', nested: { list: [1, 'two', [3]] } } };
    expect(schema.parse(value)).toEqual(value);
  });

  it('a record key is text too', () => {
    expect(issuesOf({ params: { ['k\u0000']: 1 } })?.[0]).toMatchObject({ path: ['params', 'k\u0000'] });
  });
});

interface ProcedureDef {
  type: string;
  inputs: unknown[];
}
const procedures = Object.entries(appRouter._def.procedures).map(([name, procedure]) => [name, (procedure as unknown as { _def: ProcedureDef })._def] as const);
const placesOf = (def: ProcedureDef) => def.inputs.map((input) => inputTextsOf(input));

/** Why a place does not refuse the text the database cannot store, or undefined when it does. */
const gapOf = ({ kind, schema }: InputText): string | undefined => {
  const values = kind === 'text' ? UNSTORABLE : UNSTORABLE.flatMap((text) => [text, { deep: [text] }, { [text]: 1 }]);
  const letThrough = values.filter((value) => !messagesOf(schema, value).some((message) => message.endsWith(UNSTORABLE_TEXT)));
  return letThrough.length > 0 ? `takes ${letThrough.length} of ${values.length}, e.g. ${JSON.stringify(letThrough[0])}` : undefined;
};

describe('every procedure input', () => {
  it('is made of kinds the walk knows', () => {
    expect(procedures.flatMap(([name, def]) => placesOf(def).flatMap(({ unknownKinds }) => unknownKinds.map((kind) => `${name}: ${kind}`)))).toEqual([]);
  });

  it('refuses NUL and unpaired surrogates in every string, record key and free-form value', () => {
    const places = procedures.flatMap(([name, def]) => placesOf(def).flatMap(({ texts }) => texts.map((place) => ({ name, place }))));
    // The walk finds the places it should: a path id, query text, a record's keys and free-form values.
    const named = places.map(({ name, place }) => `${name} ${describePath(place.path)}`);
    expect(named).toEqual(
      expect.arrayContaining(['analysis.getReport report_id', 'instruments.list q', 'backtest.equity.run strategy_params.{key}', 'backtest.equity.run strategy_params.{value}', 'admin.importOhlcv bars.[].open']),
    );
    expect(places.length).toBeGreaterThan(100);
    const gaps = places.flatMap(({ name, place }) => {
      const gap = gapOf(place);
      return gap ? [`${name} ${describePath(place.path)}: ${gap}`] : [];
    });
    expect(gaps).toEqual([]);
  });
});
