// /trpc: the tRPC HTTP protocol (batching, superjson) for typed clients.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { contextFor, type RequestState } from '../trpc/context.ts';
import { describeError } from '../trpc/errors.ts';

export const TRPC_PREFIX = '/trpc/';

export const createTrpcHandler = (router: AppRouter, services: Services) =>
  (req: IncomingMessage, res: ServerResponse, state: RequestState, pathname: string) =>
    nodeHTTPRequestHandler({
      router,
      req,
      res,
      path: pathname.slice(TRPC_PREFIX.length),
      maxBodySize: services.config.BODY_LIMIT_BYTES,
      createContext: () => contextFor(services, state),
      responseMeta: ({ errors }) => {
        const headers: Record<string, string> = {};
        // Request-shape errors are 422 here too, as on REST (tRPC itself would say 400 or 415).
        const invalid = errors.length > 0 && errors.every((error) => describeError(error).domainCode === 'VALIDATION_ERROR');
        for (const error of errors) {
          const data = (error.cause as { retryAfterSec?: number } | undefined)?.retryAfterSec;
          if (data !== undefined) headers['Retry-After'] = String(data);
          if (error.code === 'UNAUTHORIZED') headers['WWW-Authenticate'] = 'Bearer';
        }
        return invalid ? { status: 422, headers } : { headers };
      },
      onError: ({ error, path }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') services.logger.error({ err: error.cause ?? error, procedure: path }, 'procedure failed');
      },
    });
