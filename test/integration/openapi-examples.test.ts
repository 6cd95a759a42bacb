// The examples of the OpenAPI document (written in contracts/examples, put in by
// server/http/openapi.ts): every operation has an example of each body it has, each parameter an
// example, and each example is what its procedure accepts and answers: the request (parameters
// and body together) parses with the procedure's own input schema, the answer with its own
// output schema, unchanged; the 422 answers' examples are the ErrorBody envelope.
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ZErrorBody } from '../../contracts/errors.ts';
import { exampledOperationIds } from '../../contracts/examples/index.ts';
import { ZFeatureFlags, ZHealth } from '../../contracts/health.ts';
import { buildOpenApiDocument, operationIdOf } from '../../server/http/openapi.ts';
import { restRoutesOf } from '../../server/http/routes.ts';
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

interface Schemas {
  input?: z.ZodType;
  output: z.ZodType;
}

/** Each operation's own schemas: its procedure's input and output; the /health routes' contracts. */
const schemasById = new Map<string, Schemas>([
  ['health', { output: ZHealth }],
  ['healthFlags', { output: ZFeatureFlags }],
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
      if (op.responses['422'] && jsonOf(op.responses['422'])?.example === undefined) missing.push(`${id} (${where}): 422 answer`);
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
      const example = jsonOf(op.responses['422'])?.example;
      if (example === undefined) continue;
      const result = ZErrorBody.safeParse(example);
      if (!result.success || result.data.status !== 422 || result.data.code !== 'VALIDATION_ERROR') refused.push(`${id}: ${JSON.stringify(example)}`);
    }
    expect(refused).toEqual([]);
  });
});
