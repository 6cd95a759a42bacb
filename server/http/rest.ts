// The REST facade: the documented /api paths, served from the same procedures as /trpc. The
// routes and the OpenAPI document come from the procedures' trpc-to-openapi meta; a matched
// request calls its procedure through tRPC's own server-side caller, so every middleware, input
// and output schema runs exactly as on /trpc. Errors become the envelope of DESIGN §5 here.
import type { ServerResponse } from 'node:http';
import { TRPCError } from '@trpc/server';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { contextFor, type Context, type RequestState } from '../trpc/context.ts';
import { describeError } from '../trpc/errors.ts';
import { createCallerFactory } from '../trpc/init.ts';
import { errorBody, sendError } from './io.ts';
import type { RestRoute, RouteMatch } from './routes.ts';

type ProcedureCall = (input: unknown) => Promise<unknown>;

export type RestHandler = (res: ServerResponse, state: RequestState, match: RouteMatch, query: string, body: unknown) => Promise<void>;

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

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a matched request hands its procedure: path parameters over query or body fields. */
export const inputOf = ({ route, params }: RouteMatch, query: string, body: unknown): unknown => {
  if (route.takesNoInput) return undefined;
  if (!route.readsBody) return { ...queryInput(route, query), ...params };
  // A body that is not an object reaches the schema as it is, so the error says what it got.
  if (!isPlainObject(body)) return body;
  return { ...body, ...params };
};

export const createRestHandler = (router: AppRouter, services: Services): RestHandler => {
  const createCaller = createCallerFactory(router);
  const procedureOf = (ctx: Context, path: string): ProcedureCall =>
    path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], createCaller(ctx)) as ProcedureCall;

  return async (res, state, match, query, body) => {
    const ctx = contextFor(services, state);
    let output: unknown;
    try {
      output = await procedureOf(ctx, match.route.procedure)(inputOf(match, query, body));
    } catch (cause) {
      const error = cause instanceof TRPCError ? cause : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause });
      const described = describeError(error);
      if (described.domainCode === 'INTERNAL_ERROR') {
        services.logger.error({ err: error.cause ?? error, procedure: match.route.procedure, reqId: state.origin.requestId }, 'procedure failed');
      }
      sendError(res, errorBody(described.domainCode, described.message, described.errors), described.retryAfterSec);
      return;
    }
    res.statusCode = ctx.http.status ?? 200;
    for (const [name, value] of Object.entries(ctx.http.headers)) res.setHeader(name, value);
    if (res.statusCode === 204 || output === undefined) {
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(output));
  };
};
