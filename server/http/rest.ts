// The REST facade: trpc-to-openapi serves the documented /api paths from the same procedures
// as /trpc. We hand it a body we already read and parsed (size limit and malformed JSON are
// answered before it runs), capture what it answers, and reshape every error into the
// envelope of DESIGN §5 here, in one place.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createOpenApiExpressMiddleware } from 'trpc-to-openapi';
import { ZAppErrorCode, type TFieldError } from '../../contracts/errors.ts';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { contextFor, type Context, type RequestState } from '../trpc/context.ts';
import { errorBody, sendError, sendJson } from './io.ts';

/** The slice of a ServerResponse trpc-to-openapi writes to; we keep what it writes. */
class CapturedResponse {
  statusCode = 200;
  headers: Record<string, string> = {};
  body: string | undefined;
  private readonly real: ServerResponse;
  private readonly done: () => void;

  constructor(real: ServerResponse, done: () => void) {
    this.real = real;
    this.done = done;
  }
  setHeader(name: string, value: string | number | readonly string[]) {
    this.headers[name.toLowerCase()] = String(value);
  }
  end(body?: string) {
    this.body = body;
    this.done();
  }
  // The library listens for the client going away; those events come from the real response.
  once(event: string, listener: () => void) {
    this.real.once(event, listener);
    return this;
  }
  off(event: string, listener: () => void) {
    this.real.off(event, listener);
    return this;
  }
  get writableEnded() {
    return this.real.writableEnded;
  }
}

interface LibraryErrorBody {
  message?: string;
  data?: { domainCode?: string; errors?: TFieldError[]; retryAfterSec?: number };
}

/** Where the REST facade is mounted. */
export const API_PREFIX = '/api';

export type RestHandler = (req: IncomingMessage, res: ServerResponse, state: RequestState, body: unknown) => Promise<void>;

export const createRestHandler = (router: AppRouter, services: Services): RestHandler => {
  const states = new WeakMap<IncomingMessage, RequestState>();
  const handle = createOpenApiExpressMiddleware({
    router,
    createContext: ({ req }: { req: IncomingMessage }): Context => contextFor(services, states.get(req)!),
    responseMeta: ({ ctx, errors }: { ctx?: Context; errors: unknown[] }) =>
      errors.length === 0 && ctx ? { status: ctx.http.status ?? 200, headers: ctx.http.headers } : {},
    onError: ({ error, path }: { error: Error; path?: string }) => {
      if ((error as { code?: string }).code === 'INTERNAL_SERVER_ERROR') {
        services.logger.error({ err: error.cause ?? error, procedure: path }, 'procedure failed');
      }
    },
    maxBodySize: services.config.BODY_LIMIT_BYTES,
  });

  return async (req, res, state, body) => {
    states.set(req, state);
    // trpc-to-openapi reads a pre-parsed `req.body` and insists on a JSON content type; a body
    // sent without one is read as JSON (DESIGN §4), which we already did.
    Object.assign(req, { body });
    req.headers['content-type'] = 'application/json';
    // Procedures declare paths without the /api prefix.
    req.url = (req.url ?? '/').slice(API_PREFIX.length);
    const captured = await new Promise<CapturedResponse>((resolve, reject) => {
      const capture: CapturedResponse = new CapturedResponse(res, () => resolve(capture));
      handle(req as never, capture as never).catch(reject);
    });

    if (captured.statusCode < 400) {
      const headers = { ...captured.headers };
      delete headers['content-type'];
      if (captured.statusCode === 204) {
        sendJson(res, 204, undefined, headers);
        return;
      }
      res.statusCode = captured.statusCode;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(captured.body);
      return;
    }

    let parsed: LibraryErrorBody = {};
    try {
      parsed = JSON.parse(captured.body ?? '{}') as LibraryErrorBody;
    } catch {
      // fall through to a plain internal error
    }
    const code = ZAppErrorCode.safeParse(parsed.data?.domainCode);
    const domainCode = code.success ? code.data : 'INTERNAL_ERROR';
    const message = domainCode === 'INTERNAL_ERROR' ? 'Internal server error' : (parsed.message ?? domainCode);
    sendError(res, errorBody(domainCode, message, parsed.data?.errors), parsed.data?.retryAfterSec);
  };
};
