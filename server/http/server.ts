// The node:http server: request id, client address and CORS in front of the procedures (REST,
// /trpc and the MCP endpoint); health, metrics, OpenAPI and docs beside them; the envelope for requests node
// itself refuses; one log line and one metric sample per request.
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import type { RequestState } from '../trpc/context.ts';
import { excerpt } from '../trpc/errors.ts';
import { CONSOLE_PREFIX, CONSOLE_ROUTE, createConsoleFiles } from './console.ts';
import { serveDocs } from './docs.ts';
import { checkHealth, featureFlags } from './health.ts';
import { errorBody, requestIdOf, sendError, sendJson } from './io.ts';
import { answerClientError, responseFinished, responseStarted } from './malformed.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createMcpHandler, MCP_PATH } from './mcp.ts';
import { createHookHandler, isHookPath } from './hooks.ts';
import { clientAddressOf } from './proxy.ts';
import { createRestHandler } from './rest.ts';
import { compileRestRoutes, restRoutesOf } from './routes.ts';
import { createTrpcHandler, TRPC_PREFIX } from './trpc.ts';

const API_PREFIX = '/api/';
/** Paths served outside the REST table, all GET (and so HEAD) only. */
const FIXED_PATHS = new Set(['/health', '/health/flags', '/metrics', '/api/openapi.json', '/docs', '/docs/']);
const FIXED_ALLOW = 'GET, HEAD';

const noRoute = (method: string, pathname: string) => errorBody('NOT_FOUND', `No route for ${excerpt(method, 16)} ${excerpt(pathname, 60)}`);

const notAllowed = (res: ServerResponse, method: string, allow: string) => {
  res.setHeader('Allow', allow);
  sendError(res, errorBody('METHOD_NOT_ALLOWED', `${excerpt(method, 16)} is not allowed here; allowed: ${allow}`));
};

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

export const createHttpServer = (router: AppRouter, services: Services): Server => {
  const { config, logger, metrics } = services;
  const rest = createRestHandler(router, services);
  const trpc = createTrpcHandler(router, services);
  const mcp = createMcpHandler(router, services);
  const hook = createHookHandler(services);
  const openApiJson = buildOpenApiDocument(router, services.version);
  const corsOrigins = new Set(config.CORS_ORIGINS);
  const matchRoute = compileRestRoutes(router, '/api');
  const restRoutes = restRoutesOf(router, '/api');
  const consoleFiles = createConsoleFiles({ dir: config.CONSOLE_DIR });
  /** The methods a REST path answers to, for a 405's Allow; undefined when no route has the path. */
  const restPathOf = (pathname: string): { allow: string; template: string } | undefined => {
    const routes = restRoutes.filter((route) => route.pattern.test(pathname));
    if (routes.length === 0) return undefined;
    return { allow: [...new Set(routes.map((route) => route.method))].join(', '), template: routes[0]!.template };
  };
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
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Request-Id, trpc-accept, Mcp-Protocol-Version');
      res.setHeader('Access-Control-Max-Age', '600');
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
    // Gauges read from the database are refreshed as they are scraped.
    await services.analysis.measureQueue().catch((error: unknown) => services.logger.warn({ err: error }, 'could not measure the analysis queue'));
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
      if (match) {
        // Set before the call: logs and metrics name the template, whatever the procedure does.
        state.http.route = match.route.template;
        await rest(req, res, state, match, query);
        return;
      }
      const known = restPathOf(pathname);
      if (known) {
        state.http.route = known.template;
        notAllowed(res, method, known.allow);
      } else sendError(res, noRoute(method, pathname));
      return;
    }
    if (isHookPath(pathname)) {
      await hook(req, res, state, pathname);
      return;
    }
    if (pathname.startsWith(TRPC_PREFIX)) {
      await trpc(req, res, state, pathname, query);
      return;
    }
    if (pathname === MCP_PATH) {
      state.http.route = MCP_PATH;
      await mcp(req, res, state);
      return;
    }
    // The web console: its own method, cache and halt rules (served while halted).
    if (pathname === CONSOLE_PREFIX || pathname.startsWith(`${CONSOLE_PREFIX}/`)) {
      state.http.route = CONSOLE_ROUTE;
      await consoleFiles.serve(req, res, pathname);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      if (FIXED_PATHS.has(pathname)) {
        state.http.route = pathname === '/docs/' ? '/docs' : pathname;
        notAllowed(res, method, FIXED_ALLOW);
      } else sendError(res, noRoute(method, pathname));
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
      sendError(res, noRoute(method, pathname));
    }
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const socket = req.socket;
    responseStarted(socket);
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
      responseFinished(socket);
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

  server.on('clientError', (error: Error & { code?: string }, socket) => {
    const answer = answerClientError(error, socket);
    if (!answer) return;
    const labels = { method: 'unknown', route: 'malformed', status: String(answer.status) };
    seriesOf(labels).observe(0);
    requestLog.info({ reqId: answer.requestId, ...labels, status: answer.status, reason: answer.reason }, 'request');
  });
  return server;
};
