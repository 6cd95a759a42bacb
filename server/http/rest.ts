// The REST facade: the documented /api paths, served from the same procedures as /trpc. The
// routes and the OpenAPI document come from the procedures' trpc-to-openapi meta; a matched
// request calls its procedure through tRPC's own server-side caller, so every middleware, input
// and output schema runs exactly as on /trpc. Bodies are read here (media type, size, JSON
// depth), and errors become the envelope of DESIGN §5.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { procedureCaller } from '../trpc/caller.ts';
import { contextFor, type RequestState } from '../trpc/context.ts';
import { describeFailure, excerpt } from '../trpc/errors.ts';
import { BodyTooLargeError, errorBody, isJsonMediaType, jsonDepth, MAX_JSON_DEPTH, mediaTypeOf, readBody, sendError, unreadableBody } from './io.ts';
import type { RestRoute, RouteMatch } from './routes.ts';

const NO_BODY: { value: unknown } = { value: undefined };

export type RestHandler = (req: IncomingMessage, res: ServerResponse, state: RequestState, match: RouteMatch, query: string) => Promise<void>;

/** Query string to input: repeated keys and array-typed fields become arrays, others strings. */
const queryInput = (route: RestRoute, query: string): Record<string, unknown> => {
  const input: Record<string, unknown> = {};
  if (!query) return input;
  for (const [key, value] of new URLSearchParams(query)) {
    const seen = input[key];
    if (seen === undefined) input[key] = route.arrayFields.has(key) ? [value] : value;
    else if (Array.isArray(seen)) seen.push(value);
    else input[key] = [seen, value];
  }
  return input;
};

/** A CSV answer is asked for by the Accept header or by `format=csv` in the query. */
const wantsCsv = (req: IncomingMessage, query: string): boolean => (req.headers.accept ?? '').toLowerCase().includes('text/csv') || new URLSearchParams(query).get('format') === 'csv';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a matched request hands its procedure: path parameters over query or body fields. */
export const inputOf = ({ route, params }: RouteMatch, query: string, body: unknown): unknown => {
  if (route.takesNoInput) return undefined;
  if (!route.readsBody) return { ...queryInput(route, query), ...params };
  if (typeof body === 'string' && route.meta.textBodyField) return { ...queryInput(route, query), ...params, [route.meta.textBodyField]: body };
  // A body that is not an object reaches the schema as it is, so the error says what it got.
  if (!isPlainObject(body)) return body;
  return { ...body, ...params };
};

export const createRestHandler = (router: AppRouter, services: Services): RestHandler => {
  const { config } = services;
  const procedureOf = procedureCaller(router);

  /**
   * Reads a route's body: JSON, or a media type the route documents in its OpenAPI meta
   * (`openapi.contentTypes`, e.g. a CSV import), which reaches its input schema as text.
   * Answers 415/413/422 itself and returns undefined when it did.
   */
  const bodyOf = async (req: IncomingMessage, res: ServerResponse, route: RestRoute): Promise<{ value: unknown } | undefined> => {
    const mediaType = mediaTypeOf(req);
    const unreadable = unreadableBody(req, mediaType, route.meta.openapi.contentTypes);
    if (unreadable) {
      // The body stays unread: the connection cannot be reused.
      res.setHeader('Connection', 'close');
      sendError(res, errorBody('UNSUPPORTED_MEDIA_TYPE', unreadable));
      return undefined;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, config.BODY_LIMIT_BYTES);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      res.setHeader('Connection', 'close');
      sendError(res, errorBody('PAYLOAD_TOO_LARGE', `Body larger than ${config.BODY_LIMIT_BYTES} bytes`));
      return undefined;
    }
    const text = raw.toString('utf8');
    if (!isJsonMediaType(mediaType)) return { value: text };
    const trimmed = text.trim();
    if (trimmed === '') return { value: {} };
    if (jsonDepth(trimmed) > MAX_JSON_DEPTH) {
      sendError(res, errorBody('VALIDATION_ERROR', 'Malformed JSON body', [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }]));
      return undefined;
    }
    try {
      return { value: JSON.parse(trimmed) as unknown };
    } catch (error) {
      // V8 quotes the text around the error: bounded and printable before it is echoed.
      sendError(res, errorBody('VALIDATION_ERROR', 'Malformed JSON body', [{ path: '', message: excerpt((error as Error).message, 120) }]));
      return undefined;
    }
  };

  return async (req, res, state, match, query) => {
    // No await (and no promise) on the way of a route without a body: the hot path stays short.
    const body = match.route.readsBody ? await bodyOf(req, res, match.route) : NO_BODY;
    if (!body) return;
    const ctx = contextFor(services, state);
    const { csv } = match.route.meta;
    const asCsv = csv !== undefined && wantsCsv(req, query);
    const input = asCsv ? { ...(inputOf(match, query, body.value) as Record<string, unknown>), format: 'csv' } : inputOf(match, query, body.value);
    let output: unknown;
    try {
      output = await procedureOf(ctx, match.route.procedure)(input);
    } catch (cause) {
      const described = describeFailure(cause, (err) => services.logger.error({ err, procedure: match.route.procedure, reqId: state.origin.requestId }, 'procedure failed'));
      sendError(res, errorBody(described.domainCode, described.message, described.errors), described.retryAfterSec);
      return;
    }
    res.statusCode = ctx.http.status ?? 200;
    for (const [name, value] of Object.entries(ctx.http.headers)) res.setHeader(name, value);
    if (res.statusCode === 204 || output === undefined) {
      res.end();
      return;
    }
    if (asCsv) {
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.end(csv(input, output));
      return;
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(output));
  };
};
