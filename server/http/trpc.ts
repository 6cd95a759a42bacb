// /trpc: the tRPC HTTP protocol (batching, superjson) for typed clients, under the rules REST
// follows too: accepted media types, the body limit, the JSON depth limit, route labels for
// logs and metrics, the batch size cap, and the success status and headers a procedure sets in
// its context.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { nodeHTTPRequestHandler, type NodeHTTPRequest } from '@trpc/server/adapters/node-http';
import { statusOf } from '../../contracts/errors.ts';
import { AppError } from '../errors.ts';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { contextFor, type RequestState } from '../trpc/context.ts';
import { describeError, toTRPCError } from '../trpc/errors.ts';
import { BodyTooLargeError, jsonDepth, MAX_JSON_DEPTH, mediaTypeOf, readBody, unreadableBody } from './io.ts';

export const TRPC_PREFIX = '/trpc/';

export type TrpcHandler = (req: IncomingMessage, res: ServerResponse, state: RequestState, pathname: string, query: string) => Promise<void>;

/** A batch naming more distinct procedures than this is labelled as a batch, not by its paths. */
const MAX_LABELLED_PATHS = 3;
const BATCH_LABEL = `${TRPC_PREFIX}(batch)`;
const UNMATCHED_LABEL = `${TRPC_PREFIX}(unmatched)`;

const decoded = (path: string): string => {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
};

/**
 * The route label of a /trpc call: `/trpc/auth.me`, or for a batch its distinct procedures,
 * sorted and joined (`/trpc/admin.listUsers,auth.me`). Only procedures that exist are named, and
 * larger batches share one label, so a caller cannot mint label values (metric series) at will.
 */
export const trpcRouteLabeller = (procedures: Iterable<string>) => {
  const labels = new Map<string, string>();
  for (const path of procedures) labels.set(path, `${TRPC_PREFIX}${path}`);
  return (rawPath: string, isBatch: boolean): string => {
    const path = rawPath.includes('%') ? decoded(rawPath) : rawPath;
    const single = labels.get(path);
    if (single) return single;
    if (!isBatch) return UNMATCHED_LABEL;
    const distinct = [...new Set(path.split(','))];
    if (!distinct.every((name) => labels.has(name))) return UNMATCHED_LABEL;
    if (distinct.length === 1) return labels.get(distinct[0]!)!;
    return distinct.length > MAX_LABELLED_PATHS ? BATCH_LABEL : `${TRPC_PREFIX}${distinct.sort().join(',')}`;
  };
};

const tooDeep = (where: string) =>
  new AppError('VALIDATION_ERROR', `Malformed JSON ${where}`, { errors: [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }] });

const hasEntries = (record: Record<string, string>): boolean => {
  for (const _ in record) return true;
  return false;
};

export const createTrpcHandler = (router: AppRouter, services: Services): TrpcHandler => {
  const { config, logger } = services;
  const routeOf = trpcRouteLabeller(Object.keys(router._def.procedures));

  /**
   * Reads and checks what tRPC would otherwise read unchecked, handing it the body as text. The
   * refusal, if any, is answered by tRPC itself for every call, so it has the tRPC error shape.
   */
  const refusalOf = async (req: IncomingMessage, res: ServerResponse, params: URLSearchParams | undefined): Promise<AppError | undefined> => {
    if (req.method === 'GET' || req.method === 'HEAD') {
      const input = params?.get('input');
      return input && jsonDepth(input) > MAX_JSON_DEPTH ? tooDeep('input') : undefined;
    }
    const nodeReq = req as NodeHTTPRequest;
    const mediaType = mediaTypeOf(req);
    // tRPC reads only a declared `application/json`; what we read as JSON is declared so for it.
    if (mediaType !== 'application/json' || req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json';
    const unreadable = unreadableBody(req, mediaType, undefined);
    if (unreadable) {
      nodeReq.body = '';
      res.setHeader('Connection', 'close');
      return new AppError('UNSUPPORTED_MEDIA_TYPE', unreadable);
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, config.BODY_LIMIT_BYTES);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      nodeReq.body = '';
      res.setHeader('Connection', 'close');
      return new AppError('PAYLOAD_TOO_LARGE', `Body larger than ${config.BODY_LIMIT_BYTES} bytes`);
    }
    const text = raw.toString('utf8');
    nodeReq.body = text;
    return jsonDepth(text) > MAX_JSON_DEPTH ? tooDeep('body') : undefined;
  };

  return async (req, res, state, pathname, query) => {
    const params = query ? new URLSearchParams(query) : undefined;
    const path = pathname.slice(TRPC_PREFIX.length);
    state.http.route = routeOf(path, params?.get('batch') === '1');
    const refusal = await refusalOf(req, res, params);
    const refusalError: TRPCError | undefined = refusal && toTRPCError(refusal);

    await nodeHTTPRequestHandler({
      router,
      req,
      res,
      path,
      maxBodySize: config.BODY_LIMIT_BYTES,
      // Checked on the path before any input is parsed or any call runs: the whole batch gets one
      // BAD_REQUEST (422 VALIDATION_ERROR to our callers), so a request cannot fan out without end.
      maxBatchSize: config.TRPC_MAX_BATCH_SIZE,
      // tRPC answers an error handed to `next` as every call's outcome, in its own shape.
      middleware: refusalError
        ? (_req, _res, next) => {
            next(refusalError);
          }
        : undefined,
      createContext: () => contextFor(services, state),
      /**
       * The HTTP status comes from the calls' error shapes (see formatError): one call's status,
       * the batch's common status, or 207 when a batch's calls differ. What procedures set in
       * `ctx.http` is applied as on REST: headers whenever some call succeeded; a success status
       * only to a single, unbatched call, since one status line cannot speak for several calls
       * (and httpBatchLink sends even one call as a batch). 204 is never applied: a tRPC answer
       * always has a body.
       */
      responseMeta: ({ ctx, info, errors }) => {
        const http = ctx?.http;
        if (errors.length === 0 && !http?.status && !(http && hasEntries(http.headers))) return {};
        const headers = new Headers();
        if (http && errors.length < (info?.calls.length ?? 1)) for (const [name, value] of Object.entries(http.headers)) headers.set(name, value);
        for (const error of errors) {
          const described = describeError(error);
          if (described.retryAfterSec !== undefined) headers.set('Retry-After', String(described.retryAfterSec));
          if (statusOf(described.domainCode) === 401) headers.set('WWW-Authenticate', 'Bearer');
        }
        const single = errors.length === 0 && info !== undefined && !info.isBatchCall;
        return single && http?.status && http.status !== 204 ? { status: http.status, headers } : { headers };
      },
      onError: ({ error, path: procedure }) => {
        if (describeError(error).domainCode === 'INTERNAL_ERROR') {
          logger.error({ err: error.cause ?? error, procedure, reqId: state.origin.requestId }, 'procedure failed');
        }
      },
    });
  };
};
