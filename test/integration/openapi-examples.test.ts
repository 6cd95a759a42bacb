// The examples of the OpenAPI document (written in contracts/examples, put in by
// server/http/openapi.ts): every operation has an example of each body it has, each parameter an
// example, and each example is what its procedure accepts and answers: the request (parameters
// and body together) parses with the procedure's own input schema, the answer with its own
// output schema, unchanged; every error answer has an example of each code it lists, keyed by
// the code, in the ErrorBody envelope with the answer's status; a text body (a CSV import) has
// an example its procedure accepts in the field the text fills.
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { statusOf, ZAppErrorCode, ZErrorBody } from '../../contracts/errors.ts';
import { errorExampleOf, exampledOperationIds, examplesOf } from '../../contracts/examples/index.ts';
import { ZFeatureFlags, ZHealth } from '../../contracts/health.ts';
import { ZSignalPayload, ZSignalReceived } from '../../contracts/signals.ts';
import { buildOpenApiDocument, operationIdOf } from '../../server/http/openapi.ts';
import { restRoutesOf } from '../../server/http/routes.ts';
import { parseOhlcvCsv } from '../../server/marketdata/csv.ts';
import { appRouter } from '../../server/routers/index.ts';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
// What GET /api/openapi.json serves (test/integration/openapi.test.ts holds the two together).
const doc = JSON.parse(buildOpenApiDocument(appRouter, packageJson.version));

interface Operation {
  where: string;
  id: string;
  op: any;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const operations: Operation[] = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.has(method))
    .map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, id: op.operationId, op })),
);

const successOf = (op: any): [string, any] => Object.entries<any>(op.responses).find(([status]) => Number(status) < 300)!;
const jsonOf = (holder: any) => holder?.content?.['application/json'];
/** The 422's example of a request failing its input schema: keyed VALIDATION_ERROR among the 422's codes. */
const validationExampleOf = (response: any) => jsonOf(response)?.examples?.VALIDATION_ERROR?.value;
/** The error codes an answer lists in its description (`... Codes: A, B`). */
const listedCodesOf = (response: any): string[] => /Codes: (.+)$/.exec(response.description ?? '')?.[1]?.split(', ') ?? [];
const errorAnswersOf = (op: any): [string, any][] => Object.entries<any>(op.responses).filter(([status]) => Number(status) >= 400);

interface Schemas {
  input?: z.ZodType;
  output: z.ZodType;
}

/** Each operation's own schemas: its procedure's input and output; the /health routes' contracts. */
const schemasById = new Map<string, Schemas>([
  ['health', { output: ZHealth }],
  ['healthFlags', { output: ZFeatureFlags }],
  // The hook's call (server/http/hooks.ts): its body is the payload, its token a path parameter the payload ignores.
  ['signalsHook', { input: ZSignalPayload, output: ZSignalReceived }],
]);
for (const route of restRoutesOf(appRouter, '/api')) {
  const def = (appRouter._def.procedures as Record<string, any>)[route.procedure]._def;
  schemasById.set(operationIdOf(route.procedure), { input: def.inputs[0], output: def.output });
}

/** What the procedure receives: the parameters as a URL carries them (text), and the body. */
const requestOf = (op: any): Record<string, unknown> | undefined => {
  const parameters = Object.fromEntries((op.parameters ?? []).filter((parameter: any) => parameter.example !== undefined).map((parameter: any) => [parameter.name, String(parameter.example)]));
  const body = jsonOf(op.requestBody)?.example;
  const request = { ...parameters, ...body };
  return Object.keys(request).length === 0 ? undefined : request;
};

const issuesOf = (result: z.ZodSafeParseResult<unknown>) => (result.success ? '' : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));

describe('the examples of the OpenAPI document', () => {
  it('cover every operation: its request body, its success answer with a body, each parameter', () => {
    expect(operations.length).toBeGreaterThanOrEqual(70);
    const missing: string[] = [];
    for (const { where, id, op } of operations) {
      if (op.requestBody && jsonOf(op.requestBody)?.example === undefined) missing.push(`${id} (${where}): request body`);
      const [status, success] = successOf(op);
      if (jsonOf(success) && jsonOf(success).example === undefined) missing.push(`${id} (${where}): ${status} answer`);
      for (const parameter of op.parameters ?? []) if (parameter.example === undefined) missing.push(`${id} (${where}): ${parameter.in} parameter ${parameter.name}`);
      if (op.responses['422'] && validationExampleOf(op.responses['422']) === undefined) missing.push(`${id} (${where}): 422 answer`);
    }
    expect(missing, `${missing.length} without an example`).toEqual([]);
  });

  it('are written only for operations of the document', () => {
    const ids = new Set(operations.map((o) => o.id));
    expect(exampledOperationIds().filter((id) => !ids.has(id))).toEqual([]);
  });

  it('are what each procedure takes: parameters and body parse with its own input schema', () => {
    const refused: string[] = [];
    let parsed = 0;
    for (const { where, id, op } of operations) {
      const schemas = schemasById.get(id);
      if (!schemas) throw new Error(`${where}: no schemas for ${id}`);
      const request = requestOf(op);
      if (!schemas.input) {
        if (request !== undefined) refused.push(`${id}: the route takes no input`);
        continue;
      }
      const result = schemas.input.safeParse(request);
      if (result.success) parsed++;
      else refused.push(`${id} (${where}): ${issuesOf(result)}`);
    }
    expect(refused).toEqual([]);
    expect(parsed).toBeGreaterThanOrEqual(60);
  });

  it('are what each procedure answers: the success example passes its own output parser unchanged', () => {
    const refused: string[] = [];
    let parsed = 0;
    for (const { where, id, op } of operations) {
      const example = jsonOf(successOf(op)[1])?.example;
      if (example === undefined) continue;
      const result = schemasById.get(id)!.output.safeParse(example);
      if (!result.success) refused.push(`${id} (${where}): ${issuesOf(result)}`);
      // A field the schema does not know is stripped by the parser: the example would show what never comes.
      else if (!isDeepStrictEqual(result.data, example)) refused.push(`${id} (${where}): the parser changed it to ${JSON.stringify(result.data)}`);
      else parsed++;
    }
    expect(refused).toEqual([]);
    expect(parsed).toBeGreaterThanOrEqual(60);
  });

  it('give the 422 answers the ErrorBody envelope with status 422', () => {
    const refused: string[] = [];
    for (const { id, op } of operations) {
      const example = validationExampleOf(op.responses['422']);
      if (example === undefined) continue;
      const result = ZErrorBody.safeParse(example);
      if (!result.success || result.data.status !== 422 || result.data.code !== 'VALIDATION_ERROR') refused.push(`${id}: ${JSON.stringify(example)}`);
    }
    expect(refused).toEqual([]);
  });

  it('give every error answer an example of each code it lists, keyed by the code, and no other', () => {
    const problems: string[] = [];
    let answers = 0;
    for (const { id, op } of operations) {
      // /health's 503 is a Health body, not the envelope: its own test below.
      if (id === 'health') continue;
      for (const [status, response] of errorAnswersOf(op)) {
        const codes = listedCodesOf(response);
        answers++;
        if (codes.length === 0) problems.push(`${id} ${status}: lists no codes`);
        const media = jsonOf(response);
        // OpenAPI has example and examples exclude each other.
        if (media?.example !== undefined) problems.push(`${id} ${status}: example beside examples`);
        const keys = Object.keys(media?.examples ?? {});
        if (keys.join(', ') !== codes.join(', ')) problems.push(`${id} ${status}: examples of ${keys.join(', ')} for the codes ${codes.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
    expect(answers).toBeGreaterThanOrEqual(300);
  });

  it('give each error example the ErrorBody envelope of its own code, with the answer’s status and the status of the code', () => {
    const refused: string[] = [];
    for (const { id, op } of operations) {
      if (id === 'health') continue;
      for (const [status, response] of errorAnswersOf(op)) {
        for (const [key, example] of Object.entries<any>(jsonOf(response)?.examples ?? {})) {
          const where = `${id} ${status} ${key}`;
          if (typeof example.summary !== 'string' || example.summary.trim() === '') refused.push(`${where}: no summary`);
          const result = ZErrorBody.safeParse(example.value);
          if (!result.success) refused.push(`${where}: ${issuesOf(result)}`);
          else if (result.data.code !== key) refused.push(`${where}: the example is of ${result.data.code}`);
          else if (result.data.status !== Number(status) || result.data.status !== statusOf(result.data.code)) refused.push(`${where}: status ${result.data.status}`);
        }
      }
    }
    expect(refused).toEqual([]);
  });

  it('exist for every error code, each in the envelope with the status of its code', () => {
    for (const code of ZAppErrorCode.options) {
      const example = errorExampleOf(code);
      expect(ZErrorBody.parse(example), code).toEqual(example);
      expect(example, code).toMatchObject({ code, status: statusOf(code) });
      expect(example.message.trim(), code).not.toBe('');
    }
  });

  it('give /health’s 503 a Health body of a database that does not answer', () => {
    const media = jsonOf(operations.find((o) => o.id === 'health')!.op.responses['503']);
    expect(ZHealth.parse(media.example)).toEqual(media.example);
    expect(media.example).toMatchObject({ status: 'degraded', db: 'down' });
  });

  it('give every body that is not JSON an example: a text body’s is the text its procedure takes in the field it fills', () => {
    const missing: string[] = [];
    for (const { where, id, op } of operations) {
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        if (type !== 'application/json' && media.example === undefined) missing.push(`${id} (${where}): ${type} request body`);
      }
    }
    expect(missing).toEqual([]);
    const textRoutes = restRoutesOf(appRouter, '/api').filter((route) => route.meta.textBodyField !== undefined);
    expect(textRoutes.length).toBeGreaterThanOrEqual(1);
    for (const route of textRoutes) {
      const id = operationIdOf(route.procedure);
      const field = route.meta.textBodyField!;
      const textInput = examplesOf(id)?.textInput as Record<string, unknown> | undefined;
      expect(textInput, id).toBeDefined();
      // The text and the query fields together are what the route hands its procedure (server/http/rest.ts inputOf).
      const result = schemasById.get(id)!.input!.safeParse(textInput);
      expect(issuesOf(result), id).toBe('');
      const op = operations.find((o) => o.id === id)!.op;
      for (const [type, media] of Object.entries<any>(op.requestBody.content)) {
        if (type === 'application/json') continue;
        expect(media.schema.type, `${id} ${type}`).toBe('string');
        expect(media.example, `${id} ${type}`).toBe(textInput![field]);
      }
    }
  });

  it('give the CSV import a file the service reads, of as many bars as its example answer imports', () => {
    const op = operations.find((o) => o.id === 'adminImportOhlcv')!.op;
    const read = parseOhlcvCsv(op.requestBody.content['text/csv'].example);
    expect(read.ok && read.bars.length).toBe(jsonOf(successOf(op)[1]).example.imported);
  });
});
