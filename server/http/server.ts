// The node:http server: request id, CORS, body limit and JSON parsing in front of the
// procedures; health, metrics, OpenAPI and docs beside them; one log line and one metric
// sample per request.
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import type { RequestState } from '../trpc/context.ts';
import { serveDocs } from './docs.ts';
import { checkHealth, featureFlags } from './health.ts';
import { BodyTooLargeError, clientAddressOf, errorBody, jsonDepth, MAX_JSON_DEPTH, readBody, requestIdOf, sendError, sendJson } from './io.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createRestHandler } from './rest.ts';
import { compileRestRoutes } from './routes.ts';
import { createTrpcHandler, TRPC_PREFIX } from './trpc.ts';

const API_PREFIX = '/api/';
const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

export const createHttpServer = (router: AppRouter, services: Services): Server => {
  const { config, logger, metrics } = services;
  const rest = createRestHandler(router, services);
  const trpc = createTrpcHandler(router, services);
  const openApiJson = buildOpenApiDocument(router, services.version);
  const corsOrigins = new Set(config.CORS_ORIGINS);
  const matchRoute = compileRestRoutes(router, '/api');
  // The request line holds only fields chosen here (never a URL, header or body), so it skips
  // the redaction pass that every other log call goes through.
  const requestLog = logger.child({}, { redact: [] });
  // Label children looked up once per (method, route, status) instead of hashed per request.
  const series = new Map<string, { observe: (seconds: number) => void }>();
  const seriesOf = (labels: { method: string; route: string; status: string }) => {
    const key = `${labels.method} ${labels.route} ${labels.status}`;
    let found = series.get(key);
    if (!found) {
      const count = metrics.httpRequests.labels(labels);
      const duration = metrics.httpDuration.labels(labels);
      found = { observe: (seconds) => (count.inc(), duration.observe(seconds)) };
      series.set(key, found);
    }
    return found;
  };

  const applyCors = (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (!origin || corsOrigins.size === 0) return;
    if (!corsOrigins.has(origin) && !corsOrigins.has('*')) return;
    res.setHeader('Access-Control-Allow-Origin', corsOrigins.has('*') ? '*' : origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', 'X-Request-Id, Retry-After, WWW-Authenticate');
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Request-Id, trpc-accept');
      res.setHeader('Access-Control-Max-Age', '600');
    }
  };

  /** Reads and parses a JSON body; answers 413/422 itself and returns undefined when it did. */
  const parseBody = async (req: IncomingMessage, res: ServerResponse): Promise<{ value: unknown } | undefined> => {
    if (METHODS_WITHOUT_BODY.has(req.method ?? 'GET')) return { value: undefined };
    let raw: Buffer;
    try {
      raw = await readBody(req, config.BODY_LIMIT_BYTES);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      res.setHeader('Connection', 'close');
      sendError(res, errorBody('PAYLOAD_TOO_LARGE', `Body larger than ${config.BODY_LIMIT_BYTES} bytes`));
      return undefined;
    }
    const text = raw.toString('utf8').trim();
    if (text === '') return { value: {} };
    if (jsonDepth(text) > MAX_JSON_DEPTH) {
      sendError(res, errorBody('VALIDATION_ERROR', 'Malformed JSON body', [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }]));
      return undefined;
    }
    try {
      return { value: JSON.parse(text) as unknown };
    } catch (error) {
      sendError(res, errorBody('VALIDATION_ERROR', 'Malformed JSON body', [{ path: '', message: (error as Error).message }]));
      return undefined;
    }
  };

  const serveMetrics = async (req: IncomingMessage, res: ServerResponse) => {
    if (config.METRICS_TOKEN) {
      const given = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!sameSecret(given, config.METRICS_TOKEN)) {
        sendError(res, errorBody('UNAUTHORIZED', 'Metrics token required'));
        return;
      }
    }
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  };

  const dispatch = async (req: IncomingMessage, res: ServerResponse, state: RequestState, pathname: string, query: string) => {
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS') {
      state.http.route = 'OPTIONS';
      sendJson(res, 204, undefined);
      return;
    }
    if (pathname.startsWith(API_PREFIX) && pathname !== '/api/openapi.json') {
      const match = matchRoute(method, pathname);
      if (!match) {
        sendError(res, errorBody('NOT_FOUND', `No route for ${method} ${pathname}`));
        return;
      }
      state.http.route = match.route.template;
      const body = match.route.readsBody ? await parseBody(req, res) : { value: undefined };
      if (body) await rest(res, state, match, query, body.value);
      return;
    }
    if (pathname.startsWith(TRPC_PREFIX)) {
      await trpc(req, res, state, pathname);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      sendError(res, errorBody('NOT_FOUND', `No route for ${method} ${pathname}`));
      return;
    }
    state.http.route = pathname.startsWith('/docs') ? '/docs' : pathname;
    if (pathname === '/health') {
      const health = await checkHealth(services);
      sendJson(res, health.status === 'ok' ? 200 : 503, health);
    } else if (pathname === '/health/flags') {
      sendJson(res, 200, featureFlags(config));
    } else if (pathname === '/metrics') {
      await serveMetrics(req, res);
    } else if (services.halt.isHalted() && (pathname === '/api/openapi.json' || pathname.startsWith('/docs'))) {
      sendError(res, errorBody('SERVICE_HALTED', 'The service is halted by an operator'));
    } else if (pathname === '/api/openapi.json') {
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(openApiJson);
    } else if (!serveDocs(pathname, res)) {
      state.http.route = 'unmatched';
      sendError(res, errorBody('NOT_FOUND', `No route for ${method} ${pathname}`));
    }
  };

  return createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const state: RequestState = {
      origin: { requestId: requestIdOf(req), address: clientAddressOf(req, config.TRUST_PROXY) },
      authorization: req.headers.authorization,
      http: { status: undefined, headers: {}, route: undefined, userId: undefined },
      startedAt: process.hrtime.bigint(),
    };
    res.setHeader('X-Request-Id', state.origin.requestId);
    applyCors(req, res);
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const pathname = queryAt === -1 ? url : url.slice(0, queryAt);
    const query = queryAt === -1 ? '' : url.slice(queryAt + 1);

    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - state.startedAt) / 1e9;
      const labels = { method: req.method ?? 'GET', route: state.http.route ?? 'unmatched', status: String(res.statusCode) };
      seriesOf(labels).observe(seconds);
      // The route template, never the raw URL: a query string may carry a token.
      requestLog.info(
        { reqId: state.origin.requestId, ...labels, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10, userId: state.http.userId },
        'request',
      );
    });

    dispatch(req, res, state, pathname, query).catch((error: unknown) => {
      logger.error({ err: error, reqId: state.origin.requestId }, 'unhandled request error');
      if (!res.headersSent) sendError(res, errorBody('INTERNAL_ERROR', 'Internal server error'));
      else res.end();
    });
  });
};
