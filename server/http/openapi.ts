// The OpenAPI document: generated from the procedures' meta by trpc-to-openapi, then corrected
// in this one place: full /api paths, stable operation ids, the real success statuses, the
// documented error statuses with the error envelope, security on every operation, the plain
// /health routes beside the procedures, a description on every property and parameter, and an
// example of every operation's parameters, request body, success answer and error answers (one
// per error code the answer lists).
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { descriptionOf } from '../../contracts/descriptions.ts';
import { degradedHealthExample, errorExampleOf, errorSummaryOf, examplesOf, validationErrorExample } from '../../contracts/examples/index.ts';
import { statusOf, ZErrorBody, type TAppErrorCode } from '../../contracts/errors.ts';
import { ZFeatureFlags, ZHealth } from '../../contracts/health.ts';
import { z } from 'zod';
import { ZSignalPayload, ZSignalReceived } from '../../contracts/signals.ts';
import { nameSchemas } from '../../contracts/schema-names.ts';
import type { AppRouter } from '../routers/index.ts';
import { HOOK_OPERATION_ID, HOOK_ROUTE } from './hooks.ts';
import { restRoutesOf, type RestRoute } from './routes.ts';

type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  responses?: Record<string, unknown>;
  requestBody?: unknown;
  parameters?: unknown[];
};
/** A JSON Schema or an OpenAPI object as the generator leaves it: read only through `isNode`. */
type Node = Record<string, unknown>;
type PathItem = Record<string, Operation>;

const REASONS: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing, invalid or expired token',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body larger than BODY_LIMIT_BYTES',
  415: 'Body declared as a media type other than JSON',
  422: 'Validation error (invalid body, query or path parameter, or malformed JSON)',
  429: 'Too many requests (see Retry-After)',
  500: 'Internal error',
  502: 'Upstream broker unavailable',
  503: 'Service halted, feature disabled, or the database unreachable (see Retry-After)',
};

const BEARER = [{ bearerAuth: [] }];
/** Explicitly public: without it a linter cannot tell a public operation from a forgotten one. */
const PUBLIC: unknown[] = [];

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: schemaRef(name) } });

/** One Example Object per code, keyed by it: a client sees what each code it may get looks like. */
const errorExamples = (codes: Iterable<TAppErrorCode>) => Object.fromEntries([...codes].map((code) => [code, { summary: errorSummaryOf(code), value: errorExampleOf(code) }]));

const errorResponse = (status: number, codes: Set<TAppErrorCode>) => ({
  description: `${REASONS[status] ?? 'Error'}. Codes: ${[...codes].join(', ')}`,
  content: { 'application/json': { schema: schemaRef('ErrorBody'), examples: errorExamples(codes) } },
});

/**
 * `auth.login` → `authLogin`: derived from the procedure path alone, so an id stays the same
 * while the route's path or method changes, and clients generated from the document keep their
 * method names.
 */
export const operationIdOf = (procedure: string): string =>
  procedure
    .split('.')
    .map((part, index) => (index === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');

const errorCodesOf = (route: RestRoute): TAppErrorCode[] => {
  const { meta } = route;
  // Any route may find the database gone (503 SERVICE_UNAVAILABLE).
  const codes: TAppErrorCode[] = ['VALIDATION_ERROR', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', ...(meta.errors ?? [])];
  if (meta.openapi.protect) codes.push('UNAUTHORIZED');
  if (route.procedure.startsWith('admin.')) codes.push('FORBIDDEN');
  if (!meta.haltExempt) codes.push('SERVICE_HALTED');
  // The body rules apply wherever the runtime reads a body, before the procedure runs.
  if (route.readsBody) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  return codes;
};

const responsesOf = (route: RestRoute, generated: Operation): Record<string, unknown> => {
  const success = route.meta.status ?? 200;
  const ok = generated.responses?.['200'];
  const answer = success === 204 ? { description: 'No content' } : (ok ?? { description: 'OK' });
  const responses: Record<string, unknown> = {
    // A route that also answers CSV (meta.csv) says so beside its JSON.
    [String(success)]: route.meta.csv && isNode(answer) && isNode(answer.content) ? { ...answer, content: { ...answer.content, 'text/csv': { schema: { type: 'string', description: 'A header line, then a line per row (RFC 4180)' } } } } : answer,
  };
  return { ...responses, ...errorResponsesOf(errorCodesOf(route)) };
};

/** The error answers of `codes`, one per status, in status order. */
const errorResponsesOf = (codes: Iterable<TAppErrorCode>): Record<string, unknown> => {
  const byStatus = new Map<number, Set<TAppErrorCode>>();
  for (const code of codes) {
    const status = statusOf(code);
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [String(status), errorResponse(status, codes)]));
};

/** The plain node:http routes of server/http/server.ts; their bodies are the contracts' schemas. */
const healthPaths = (): Record<string, PathItem> => ({
  '/health': {
    get: {
      operationId: 'health',
      summary: 'Liveness and database reachability',
      tags: ['health'],
      security: PUBLIC,
      responses: {
        '200': { description: 'The service and its database answer (also while halted: see `halted`)', content: json('Health') },
        '503': {
          description: 'The database does not answer: `status` is `degraded`, `db` is `down`',
          content: { 'application/json': { schema: schemaRef('Health'), example: degradedHealthExample } },
        },
      },
    },
  },
  '/health/flags': {
    get: {
      operationId: 'healthFlags',
      summary: 'Every FEATURE_* setting and ALLOW_LIVE, keyed by setting name',
      tags: ['health'],
      security: PUBLIC,
      responses: { '200': { description: 'The flags in force', content: json('FeatureFlags') } },
    },
  },
});

/**
 * A signal webhook's call (server/http/hooks.ts), beside the REST table: its token in the path is
 * its credential, its body the contracts' SignalPayload as JSON, also declared as text/plain.
 */
const hookPaths = (): Record<string, PathItem> => {
  const { token: _token, ...body } = (examplesOf(HOOK_OPERATION_ID)?.input ?? {}) as Record<string, unknown>;
  return {
    [HOOK_ROUTE]: {
      post: {
        operationId: HOOK_OPERATION_ID,
        summary: 'Send a signal to a webhook (a TradingView-style alert): 202 once it is recorded, its order placed through the five gates right after; see GET /api/signals',
        tags: ['signals'],
        security: PUBLIC,
        parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: schemaRef('SignalPayload') },
            'text/plain': { schema: { type: 'string', description: 'The same JSON object as text: what TradingView sends when the alert’s message is not pure JSON to it' }, example: JSON.stringify(body) },
          },
        },
        responses: {
          '202': { description: 'The signal is recorded; its order follows', content: json('SignalReceived') },
          ...errorResponsesOf(['VALIDATION_ERROR', 'FORBIDDEN', 'NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMIT_EXCEEDED', 'INTERNAL_ERROR', 'SERVICE_HALTED', 'SERVICE_UNAVAILABLE']),
        },
      },
    },
  };
};

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasDescription = (node: Node) => typeof node.description === 'string' && node.description.trim() !== '';

/** The keywords through which a schema holds other schemas (besides `properties`). */
const SUBSCHEMA_KEYS = ['items', 'additionalProperties', 'not'] as const;
const SUBSCHEMA_LIST_KEYS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/**
 * Gives each property of `schema` (and of the schemas inside it) without a description the
 * dictionary's, looked up under `roots` (the component, or the operation) followed by the path of
 * properties that leads to it, then under its parent property. The walk does not follow a
 * `$ref`: the component it names is described where it is defined. A property that is itself a
 * `$ref` would get its description beside it, which OpenAPI 3.1 (this document's version)
 * allows. A name the dictionary lacks stays undescribed rather than failing the build: the
 * OpenAPI test lists it.
 */
export const describeProperties = (schema: unknown, roots: readonly string[], trail: readonly string[] = []): void => {
  if (!isNode(schema)) return;
  if (isNode(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      if (!isNode(property)) continue;
      if (!hasDescription(property)) {
        const path = trail.map((step) => `.${step}`).join('');
        const parent = trail.at(-1);
        const description = descriptionOf(name, [...roots.map((root) => `${root}${path}`), ...(parent === undefined ? [] : [parent])]);
        if (description !== undefined) property.description = description;
      }
      describeProperties(property, roots, [...trail, name]);
    }
  }
  for (const key of SUBSCHEMA_KEYS) describeProperties(schema[key], roots, trail);
  for (const key of SUBSCHEMA_LIST_KEYS) {
    const list = schema[key];
    if (Array.isArray(list)) for (const item of list) describeProperties(item, roots, trail);
  }
};

const schemasOfContent = (content: unknown): unknown[] => (isNode(content) ? Object.values(content).map((media) => (isNode(media) ? media.schema : undefined)) : []);

/** Every component's properties, and each operation's parameters, inline body and inline answers. */
const describeDocument = (paths: Record<string, PathItem>, schemas: Record<string, unknown>): void => {
  for (const [name, schema] of Object.entries(schemas)) describeProperties(schema, [name]);
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const id = operation.operationId ?? '';
      for (const parameter of operation.parameters ?? []) {
        if (!isNode(parameter) || hasDescription(parameter) || typeof parameter.name !== 'string') continue;
        const description = descriptionOf(parameter.name, [id], true);
        if (description !== undefined) parameter.description = description;
      }
      const body = isNode(operation.requestBody) ? operation.requestBody.content : undefined;
      for (const schema of schemasOfContent(body)) describeProperties(schema, [`${id}.request`, id]);
      for (const response of Object.values(operation.responses ?? {})) {
        for (const schema of schemasOfContent(isNode(response) ? response.content : undefined)) describeProperties(schema, [`${id}.response`, id]);
      }
    }
  }
};

/**
 * `content` with `example` on its JSON media type, as new objects: the generator may hand one
 * content or response object to several places, and an example belongs to one.
 */
const withExample = (content: unknown, example: unknown): unknown =>
  isNode(content) && isNode(content['application/json']) ? { ...content, 'application/json': { ...content['application/json'], example } } : content;

/** `content` whose JSON media type's example of `code` has `value` instead, as new objects (see withExample). */
const withCodeExample = (content: unknown, code: TAppErrorCode, value: unknown): unknown => {
  const media = isNode(content) ? content['application/json'] : undefined;
  if (!isNode(content) || !isNode(media) || !isNode(media.examples) || !isNode(media.examples[code])) return content;
  return { ...content, 'application/json': { ...media, examples: { ...media.examples, [code]: { ...media.examples[code], value } } } };
};

/** `content` with `example` on each media type other than JSON, as new objects (see withExample). */
const withTextExample = (content: unknown, example: unknown): unknown =>
  isNode(content)
    ? Object.fromEntries(Object.entries(content).map(([type, media]) => [type, type === 'application/json' || !isNode(media) ? media : { ...media, example }]))
    : content;

/**
 * The generator gives every media type of a body the input's schema; a text body (`textBodyField`,
 * e.g. a CSV import) is only that field's text, the other fields coming in the query string. So
 * each media type but JSON gets that field's schema, described as the field is.
 */
const withTextBodySchema = (requestBody: unknown, field: string, operationId: string): unknown => {
  if (!isNode(requestBody) || !isNode(requestBody.content)) return requestBody;
  const description = descriptionOf(field, [`${operationId}.request`, operationId]);
  const textSchema = (schema: unknown): Node => {
    const property = isNode(schema) && isNode(schema.properties) ? schema.properties[field] : undefined;
    return { ...(isNode(property) ? property : { type: 'string' }), ...(description === undefined ? {} : { description }) };
  };
  const content = Object.fromEntries(
    Object.entries(requestBody.content).map(([type, media]) => [type, type === 'application/json' || !isNode(media) ? media : { ...media, schema: textSchema(media.schema) }]),
  );
  return { ...requestBody, content };
};

/**
 * The examples of contracts/examples on each operation: a parameter's is the input field of its
 * name, the request body's is the rest of the input (a text body's, the text field of
 * `textInput`), the success answer's is the output, and the 422 answer's VALIDATION_ERROR names
 * one field of the input. An operation without examples stays without them rather than failing
 * the build: the examples test lists it. `textFields` maps an operation id to its `textBodyField`.
 */
const exemplifyDocument = (paths: Record<string, PathItem>, textFields: ReadonlyMap<string, string>): void => {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const found = examplesOf(operation.operationId ?? '');
      const input = isNode(found?.input) ? found.input : {};
      const parameterNames = new Set<string>();
      operation.parameters = operation.parameters?.map((parameter) => {
        if (!isNode(parameter) || typeof parameter.name !== 'string') return parameter;
        parameterNames.add(parameter.name);
        return parameter.name in input ? { ...parameter, example: input[parameter.name] } : parameter;
      });
      const { requestBody } = operation;
      const body = Object.fromEntries(Object.entries(input).filter(([name]) => !parameterNames.has(name)));
      if (isNode(requestBody) && found?.input !== undefined) operation.requestBody = { ...requestBody, content: withExample(requestBody.content, body) };
      const textField = textFields.get(operation.operationId ?? '');
      const textInput = isNode(found?.textInput) ? found.textInput : {};
      if (isNode(operation.requestBody) && textField !== undefined && textField in textInput) {
        operation.requestBody = { ...operation.requestBody, content: withTextExample(operation.requestBody.content, textInput[textField]) };
      }
      // The 422 names a body field where there is a body, else a parameter.
      const faulty = Object.keys(body)[0] ?? Object.keys(input)[0];
      const responses = operation.responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        if (!isNode(response)) continue;
        if (Number(status) < 300 && found?.output !== undefined) responses[status] = { ...response, content: withExample(response.content, found.output) };
        if (status === '422') responses[status] = { ...response, content: withCodeExample(response.content, 'VALIDATION_ERROR', validationErrorExample(faulty)) };
      }
    }
  }
};

export const buildOpenApiDocument = (router: AppRouter, version: string): string => {
  nameSchemas();
  const doc = generateOpenApiDocument(router, {
    title: 'Trading service',
    description: 'Multi-user trading back end: auth, orders, analysis, backtests, live trading, events.',
    version,
    // As in package.json; a test holds the two together.
    license: { name: 'MIT', identifier: 'MIT' },
    baseUrl: '/',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    defs: { ErrorBody: ZErrorBody, Health: ZHealth, FeatureFlags: ZFeatureFlags, SignalPayload: ZSignalPayload, SignalReceived: ZSignalReceived },
  });

  const routeOf = new Map(restRoutesOf(router, '').map((route) => [`${route.method.toLowerCase()} ${route.template}`, route]));

  const paths: Record<string, PathItem> = {};
  const textFields = new Map<string, string>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, PathItem>)) {
    for (const [method, operation] of Object.entries(item)) {
      const route = routeOf.get(`${method} ${path}`);
      // Both read the same meta: an operation without a route would be a bug in routes.ts.
      if (!route) throw new Error(`OpenAPI operation ${method.toUpperCase()} ${path} has no REST route`);
      operation.operationId = operationIdOf(route.procedure);
      operation.responses = responsesOf(route, operation);
      operation.security = route.meta.openapi.protect ? BEARER : PUBLIC;
      const { textBodyField } = route.meta;
      if (textBodyField !== undefined) {
        textFields.set(operation.operationId, textBodyField);
        operation.requestBody = withTextBodySchema(operation.requestBody, textBodyField, operation.operationId);
      }
    }
    paths[`/api${path}`] = item;
  }
  Object.assign(paths, healthPaths(), hookPaths());

  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      const clash = seen.get(operation.operationId ?? '');
      if (clash) throw new Error(`OpenAPI operationId ${operation.operationId} names both ${clash} and ${where}`);
      seen.set(operation.operationId ?? '', where);
    }
  }
  doc.paths = paths;
  // trpc-to-openapi adds schemas of its own error shape; our errors all use ErrorBody.
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  // Components of `defs` are written as outputs, where a default makes a field required; the
  // hook's payload is a request's body, where it makes the field optional (order_type: market).
  const payload = schemas.SignalPayload as { required?: string[] } | undefined;
  if (payload) payload.required = (z.toJSONSchema(ZSignalPayload, { io: 'input' }) as { required?: string[] }).required ?? [];
  // A copy: the generator may hand one schema object to several places, and a description must
  // follow the place it is written for, not whichever place was described first.
  const described = structuredClone(doc);
  describeDocument(described.paths as Record<string, PathItem>, described.components?.schemas ?? {});
  exemplifyDocument(described.paths as Record<string, PathItem>, textFields);
  return JSON.stringify(described);
};
